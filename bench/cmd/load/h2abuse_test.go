package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/dwellhttp/dwell/bench/internal/peer"
)

// TestMain lets the test binary be the attacker h2-abuse starts (os.Executable h2-attack ...),
// as the load tool is in a real run.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "h2-attack" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// readPreface checks the client connection preface at the start of r.
func readPreface(t *testing.T, r io.Reader) {
	t.Helper()
	buf := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(r, buf); err != nil || string(buf) != http2.ClientPreface {
		t.Fatalf("preface %q, %v", buf, err)
	}
}

// decodeFields decodes a whole field block into name: value pairs, in order.
func decodeFields(t *testing.T, d *hpack.Decoder, block []byte) []hpack.HeaderField {
	t.Helper()
	fields, err := d.DecodeFull(block)
	if err != nil {
		t.Fatal(err)
	}
	return fields
}

func fieldValue(fields []hpack.HeaderField, name string) string {
	for _, f := range fields {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// attackFrames writes an attack's preface and units (or, for zero-window and tiny-window, its
// streams) into a buffer and returns a Framer reading them back, past the preface, and what
// wrote them. The preface's SETTINGS are checked: ENABLE_PUSH 0, and INITIAL_WINDOW_SIZE 0 for
// zero-window, 1 for tiny-window, none for the floods.
func attackFrames(t *testing.T, attack string, units int) (*http2.Framer, *abuseFrames) {
	t.Helper()
	var buf bytes.Buffer
	a := newAbuseFrames(attack, &buf, "https", "127.0.0.1:8443", "/hello")
	if err := a.preface(); err != nil {
		t.Fatal(err)
	}
	if streamAttack(attack) {
		if _, err := a.open(units); err != nil {
			t.Fatal(err)
		}
	} else {
		for range units {
			if err := a.unit(); err != nil {
				t.Fatal(err)
			}
		}
	}
	readPreface(t, &buf)
	fr := http2.NewFramer(io.Discard, &buf)
	f, err := fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		t.Fatalf("%s: first frame %v", attack, f)
	}
	if v, ok := sf.Value(http2.SettingEnablePush); !ok || v != 0 {
		t.Errorf("%s: ENABLE_PUSH %d, %v", attack, v, ok)
	}
	want := map[string]uint32{attackZeroWindow: 0, attackTinyWindow: 1}
	w, windowed := want[attack]
	if v, ok := sf.Value(http2.SettingInitialWindowSize); ok != windowed || v != w {
		t.Errorf("%s: INITIAL_WINDOW_SIZE %d, %v", attack, v, ok)
	}
	return fr, a
}

// readAll reads the rest of the frames, counting them with the preface's SETTINGS.
func readAll(t *testing.T, fr *http2.Framer, each func(i int, f http2.Frame)) int {
	t.Helper()
	n := 1
	for i := 0; ; i++ {
		f, err := fr.ReadFrame()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		n++
		each(i, f)
	}
}

// TestAbuseFramesReset: each unit is the HEADERS of a GET /hello ending its stream, then that
// stream's RST_STREAM CANCEL, on stream ids 1, 3, 5, ...
func TestAbuseFramesReset(t *testing.T) {
	fr, a := attackFrames(t, attackReset, 50)
	dec := hpack.NewDecoder(4096, nil)
	n := readAll(t, fr, func(i int, f http2.Frame) {
		id := uint32(i/2*2 + 1)
		if f.Header().StreamID != id {
			t.Fatalf("frame %d on stream %d, want %d", i, f.Header().StreamID, id)
		}
		switch f := f.(type) {
		case *http2.HeadersFrame:
			if i%2 != 0 || !f.StreamEnded() || !f.HeadersEnded() {
				t.Fatalf("frame %d: %v", i, f)
			}
			fields := decodeFields(t, dec, f.HeaderBlockFragment())
			if fieldValue(fields, ":method") != "GET" || fieldValue(fields, ":path") != "/hello" ||
				fieldValue(fields, ":scheme") != "https" || fieldValue(fields, ":authority") != "127.0.0.1:8443" {
				t.Fatalf("frame %d: %v", i, fields)
			}
		case *http2.RSTStreamFrame:
			if i%2 != 1 || f.ErrCode != http2.ErrCodeCancel {
				t.Fatalf("frame %d: %v", i, f)
			}
		default:
			t.Fatalf("frame %d: %v", i, f)
		}
	})
	if n != 101 || a.frames != 101 {
		t.Errorf("%d frames read, %d counted; want 101", n, a.frames)
	}
}

// TestAbuseFramesContinuation: one HEADERS without END_HEADERS, then CONTINUATIONs on its
// stream, none of them ending the block, each with continuationFields new header fields.
func TestAbuseFramesContinuation(t *testing.T) {
	fr, a := attackFrames(t, attackContinuation, 20)
	var block []byte
	n := readAll(t, fr, func(i int, f http2.Frame) {
		switch f := f.(type) {
		case *http2.HeadersFrame:
			if i != 0 || f.StreamID != 1 || f.HeadersEnded() || !f.StreamEnded() {
				t.Fatalf("frame %d: %v", i, f)
			}
			block = append(block, f.HeaderBlockFragment()...)
		case *http2.ContinuationFrame:
			if i == 0 || f.StreamID != 1 || f.HeadersEnded() || len(f.HeaderBlockFragment()) == 0 {
				t.Fatalf("frame %d: %v", i, f)
			}
			block = append(block, f.HeaderBlockFragment()...)
		default:
			t.Fatalf("frame %d: %v", i, f)
		}
	})
	if n != 21 || a.frames != 21 {
		t.Errorf("%d frames read, %d counted; want 21", n, a.frames)
	}
	// The block never ends; what came so far decodes into the request and the flood's fields.
	fields := decodeFields(t, hpack.NewDecoder(4096, nil), block)
	if len(fields) != 4+19*continuationFields || fieldValue(fields, ":path") != "/hello" {
		t.Fatalf("%d fields: %v", len(fields), fields[:min(len(fields), 6)])
	}
	names := map[string]bool{}
	for _, f := range fields[4:] {
		if !strings.HasPrefix(f.Name, "x-flood-") || len(f.Value) != continuationValue || !f.Sensitive || names[f.Name] {
			t.Fatalf("field %+v", f)
		}
		names[f.Name] = true
	}
}

// TestAbuseFramesSettingsPing: SETTINGS frames that are no ACKs; PINGs that are no ACKs, each
// with a new payload.
func TestAbuseFramesSettingsPing(t *testing.T) {
	fr, a := attackFrames(t, attackSettings, 30)
	n := readAll(t, fr, func(i int, f http2.Frame) {
		sf, ok := f.(*http2.SettingsFrame)
		if !ok || sf.IsAck() || sf.NumSettings() != 1 {
			t.Fatalf("frame %d: %v", i, f)
		}
		if v, ok := sf.Value(http2.SettingEnablePush); !ok || v != 0 {
			t.Fatalf("frame %d: %v", i, f)
		}
	})
	if n != 31 || a.frames != 31 {
		t.Errorf("settings: %d frames read, %d counted", n, a.frames)
	}
	fr, a = attackFrames(t, attackPing, 30)
	n = readAll(t, fr, func(i int, f http2.Frame) {
		pf, ok := f.(*http2.PingFrame)
		if !ok || pf.IsAck() || binary.BigEndian.Uint64(pf.Data[:]) != uint64(i+1) {
			t.Fatalf("frame %d: %v", i, f)
		}
	})
	if n != 31 || a.frames != 31 {
		t.Errorf("ping: %d frames read, %d counted", n, a.frames)
	}
}

// TestAbuseFramesPriority: PRIORITY frames on new stream ids, each depending on the one before.
func TestAbuseFramesPriority(t *testing.T) {
	fr, a := attackFrames(t, attackPriority, 40)
	n := readAll(t, fr, func(i int, f http2.Frame) {
		pf, ok := f.(*http2.PriorityFrame)
		id := uint32(2*i + 1)
		if !ok || pf.StreamID != id || pf.Weight != 15 || pf.Exclusive {
			t.Fatalf("frame %d: %v", i, f)
		}
		if want := uint32(max(int(id)-2, 0)); pf.StreamDep != want {
			t.Fatalf("frame %d depends on %d, want %d", i, pf.StreamDep, want)
		}
	})
	if n != 41 || a.frames != 41 {
		t.Errorf("%d frames read, %d counted", n, a.frames)
	}
}

// TestAbuseFramesEmptyData: a GET's HEADERS that leaves its stream open, emptyDataPerStream
// 0-length DATA on it, the last ending it, then the next stream.
func TestAbuseFramesEmptyData(t *testing.T) {
	units := emptyDataPerStream + 3
	fr, a := attackFrames(t, attackEmptyData, units)
	var heads []uint32
	data := map[uint32]int{}
	var ended []uint32
	n := readAll(t, fr, func(i int, f http2.Frame) {
		switch f := f.(type) {
		case *http2.HeadersFrame:
			if f.StreamEnded() || !f.HeadersEnded() {
				t.Fatalf("frame %d: %v", i, f)
			}
			heads = append(heads, f.StreamID)
		case *http2.DataFrame:
			if len(f.Data()) != 0 || len(heads) == 0 || f.StreamID != heads[len(heads)-1] {
				t.Fatalf("frame %d: %v", i, f)
			}
			data[f.StreamID]++
			if f.StreamEnded() {
				ended = append(ended, f.StreamID)
			}
		default:
			t.Fatalf("frame %d: %v", i, f)
		}
	})
	if !slices.Equal(heads, []uint32{1, 3}) || data[1] != emptyDataPerStream || data[3] != 3 || !slices.Equal(ended, []uint32{1}) {
		t.Errorf("HEADERS on %v, DATA %v, ended %v", heads, data, ended)
	}
	if want := 1 + 2 + units; n != want || a.frames != int64(want) {
		t.Errorf("%d frames read, %d counted; want %d", n, a.frames, want)
	}
}

// TestAbuseFramesWindowUpdate: WINDOW_UPDATE frames on the connection, each of increment 1.
func TestAbuseFramesWindowUpdate(t *testing.T) {
	fr, a := attackFrames(t, attackWindowUpdate, 60)
	n := readAll(t, fr, func(i int, f http2.Frame) {
		wf, ok := f.(*http2.WindowUpdateFrame)
		if !ok || wf.StreamID != 0 || wf.Increment != 1 {
			t.Fatalf("frame %d: %v", i, f)
		}
	})
	if n != 61 || a.frames != 61 {
		t.Errorf("%d frames read, %d counted", n, a.frames)
	}
}

// TestAbuseFramesZeroWindow: SETTINGS with INITIAL_WINDOW_SIZE 0, and for tiny-window 1
// (checked by attackFrames), then the streams' GETs, each ending its side.
func TestAbuseFramesZeroWindow(t *testing.T) {
	for _, attack := range []string{attackZeroWindow, attackTinyWindow} {
		fr, a := attackFrames(t, attack, 100)
		dec := hpack.NewDecoder(4096, nil)
		n := readAll(t, fr, func(i int, f http2.Frame) {
			hf, ok := f.(*http2.HeadersFrame)
			if !ok || hf.StreamID != uint32(2*i+1) || !hf.StreamEnded() || !hf.HeadersEnded() {
				t.Fatalf("%s: frame %d: %v", attack, i, f)
			}
			if p := fieldValue(decodeFields(t, dec, hf.HeaderBlockFragment()), ":path"); p != "/hello" {
				t.Fatalf("%s: frame %d: path %q", attack, i, p)
			}
		})
		if n != 101 || a.frames != 101 {
			t.Errorf("%s: %d frames read, %d counted", attack, n, a.frames)
		}
	}
}

// TestQuantile checks the nearest-rank percentiles the normal client reports.
func TestQuantile(t *testing.T) {
	var lats []time.Duration
	for i := 1; i <= 1000; i++ {
		lats = append(lats, time.Duration(i)*time.Microsecond)
	}
	for q, want := range map[float64]float64{0.5: 500, 0.99: 990, 0.999: 999, 1: 1000, 0: 1} {
		if got := quantile(lats, q); got != want {
			t.Errorf("q%v = %v, want %v", q, got, want)
		}
	}
	if got := quantile(lats[:10], 0.99); got != 10 {
		t.Errorf("p99 of 10 = %v, want the largest", got)
	}
	if got := quantile(nil, 0.99); got != 0 {
		t.Errorf("p99 of none = %v", got)
	}
}

// fakeServer listens on loopback and hands each connection, preface read, to serve, in the
// test's goroutines; accepted receives each connection's index as it is accepted.
func fakeServer(t *testing.T, serve func(i int, c net.Conn, fr *http2.Framer)) (addr string, accepted <-chan int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	ch := make(chan int, 16)
	go func() {
		for i := 0; ; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			ch <- i
			go func() {
				br := bufio.NewReader(c)
				buf := make([]byte, len(http2.ClientPreface))
				if _, err := io.ReadFull(br, buf); err != nil {
					return
				}
				serve(i, c, http2.NewFramer(c, br))
			}()
		}
	}()
	return ln.Addr().String(), ch
}

// TestAttackReconnects: a rapid-reset attacker on one connection that the server ends with a
// GOAWAY after 40 frames counts the GOAWAY and the close, and connects again.
func TestAttackReconnects(t *testing.T) {
	addr, accepted := fakeServer(t, func(i int, c net.Conn, fr *http2.Framer) {
		if i > 0 {
			io.Copy(io.Discard, c)
			return
		}
		for range 40 {
			if _, err := fr.ReadFrame(); err != nil {
				return
			}
		}
		fr.WriteGoAway(1, http2.ErrCodeEnhanceYourCalm, []byte("too many resets"))
		c.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, c) // what the attacker sent, until it closes: no reset comes back
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type out struct {
		v   any
		err error
	}
	done := make(chan out, 1)
	go func() {
		v, err := runH2Attack(ctx, []string{"-addr", addr, "-attack", attackReset, "-conns", "1"})
		done <- out{v, err}
	}()
	<-accepted
	<-accepted // the attacker came back
	cancel()
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	res := o.v.(*h2AttackResult)
	if res.Connections != 2 || res.Reconnects != 1 || res.Closed != 1 || res.Goaways != 1 || res.Frames < 40 || res.FirstCloseS <= 0 {
		t.Errorf("%+v", res)
	}
	if res.GoawayCodes[`ENHANCE_YOUR_CALM "too many resets"`] != 1 {
		t.Errorf("GOAWAY codes %v", res.GoawayCodes)
	}
}

// TestAttackZeroWindow: the zero-window attacker opens as many streams as the server allows,
// and counts what the server did with them: one answered and ended, one reset, one held.
func TestAttackZeroWindow(t *testing.T) {
	served := make(chan error, 1)
	addr, _ := fakeServer(t, func(i int, c net.Conn, fr *http2.Framer) {
		served <- func() error {
			f, err := fr.ReadFrame()
			if err != nil {
				return err
			}
			if sf, ok := f.(*http2.SettingsFrame); !ok {
				return errors.New("no SETTINGS first")
			} else if v, ok := sf.Value(http2.SettingInitialWindowSize); !ok || v != 0 {
				return errors.New("no INITIAL_WINDOW_SIZE 0")
			}
			if err := fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 3}); err != nil {
				return err
			}
			var ids []uint32
			for len(ids) < 3 {
				f, err := fr.ReadFrame()
				if err != nil {
					return err
				}
				if hf, ok := f.(*http2.HeadersFrame); ok {
					ids = append(ids, hf.StreamID)
				}
			}
			var hb bytes.Buffer
			enc := hpack.NewEncoder(&hb)
			enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
			for _, id := range ids {
				if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true}); err != nil {
					return err
				}
			}
			fr.WriteRSTStream(ids[0], http2.ErrCodeCancel)
			fr.WriteData(ids[1], true, nil)
			// The attacker answers PINGs: its answer says it read all that came before.
			fr.WritePing(false, [8]byte{1})
			for {
				f, err := fr.ReadFrame()
				if err != nil {
					return err
				}
				if pf, ok := f.(*http2.PingFrame); ok && pf.IsAck() {
					return nil
				}
			}
		}()
		io.Copy(io.Discard, c)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var res *h2AttackResult
	done := make(chan error, 1)
	go func() {
		v, err := runH2Attack(ctx, []string{"-addr", addr, "-attack", attackZeroWindow, "-conns", "1", "-streams", "100"})
		if err == nil {
			res = v.(*h2AttackResult)
		}
		done <- err
	}()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if res.Opened != 3 || res.Responses != 3 || res.Rsts != 1 || res.Ended != 1 || res.Held != 1 || res.Closed != 0 ||
		res.Connections != 1 || res.RstCodes["CANCEL"] != 1 || res.FirstRstS <= 0 || res.LastRstS != res.FirstRstS {
		t.Errorf("%+v", res)
	}
}

// TestAttackWindowUpdate: the WINDOW_UPDATE flood sends nothing but increments of 1 on the
// connection, reads what the server sends (it acknowledges the server's SETTINGS and counts its
// GOAWAY), and connects again when the server ends the connection.
func TestAttackWindowUpdate(t *testing.T) {
	served := make(chan error, 1)
	addr, accepted := fakeServer(t, func(i int, c net.Conn, fr *http2.Framer) {
		if i > 0 {
			io.Copy(io.Discard, c)
			return
		}
		served <- func() error {
			f, err := fr.ReadFrame()
			if err != nil {
				return err
			}
			if sf, ok := f.(*http2.SettingsFrame); !ok || sf.IsAck() {
				return fmt.Errorf("first frame %v, not SETTINGS", f)
			} else if _, ok := sf.Value(http2.SettingInitialWindowSize); ok {
				return errors.New("the flood announced INITIAL_WINDOW_SIZE")
			}
			if err := fr.WriteSettings(); err != nil {
				return err
			}
			updates, acked := 0, false
			for updates < 1000 || !acked {
				f, err := fr.ReadFrame()
				if err != nil {
					return fmt.Errorf("after %d WINDOW_UPDATEs: %w", updates, err)
				}
				switch f := f.(type) {
				case *http2.WindowUpdateFrame:
					if f.StreamID != 0 || f.Increment != 1 {
						return fmt.Errorf("WINDOW_UPDATE on stream %d of %d", f.StreamID, f.Increment)
					}
					updates++
				case *http2.SettingsFrame:
					if !f.IsAck() || acked {
						return fmt.Errorf("SETTINGS %v after %d WINDOW_UPDATEs", f, updates)
					}
					acked = true
				default:
					return fmt.Errorf("%v after %d WINDOW_UPDATEs", f, updates)
				}
			}
			return fr.WriteGoAway(0, http2.ErrCodeFlowControl, []byte("window updates"))
		}()
		c.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, c)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var res *h2AttackResult
	done := make(chan error, 1)
	go func() {
		v, err := runH2Attack(ctx, []string{"-addr", addr, "-attack", attackWindowUpdate, "-conns", "1"})
		if err == nil {
			res = v.(*h2AttackResult)
		}
		done <- err
	}()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	<-accepted
	<-accepted // the attacker came back
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if res.Connections != 2 || res.Reconnects != 1 || res.Closed != 1 || res.Goaways != 1 || res.Frames < 1002 || res.FirstCloseS <= 0 {
		t.Errorf("%+v", res)
	}
	if res.GoawayCodes[`FLOW_CONTROL_ERROR "window updates"`] != 1 {
		t.Errorf("GOAWAY codes %v", res.GoawayCodes)
	}
}

// TestAttackTinyWindow: the tiny-window attacker announces INITIAL_WINDOW_SIZE 1 and opens as
// many GETs of the attack path as the server allows; it gives back every DATA frame's length,
// padding included, on its stream and on the connection (on the connection alone for the frame
// that ends its stream), opens a new stream whenever one ends or is reset, opens none after a
// GOAWAY, and leaves the connection for a new one once the streams the GOAWAY left have ended.
func TestAttackTinyWindow(t *testing.T) {
	served := make(chan error, 1)
	again := make(chan struct{})
	addr, _ := fakeServer(t, func(i int, c net.Conn, fr *http2.Framer) {
		if i > 0 {
			// The attacker's next connection: once its SETTINGS are read, the preface has been
			// written and counted.
			if _, err := fr.ReadFrame(); err == nil {
				close(again)
			}
			io.Copy(io.Discard, c)
			return
		}
		served <- tinyWindowServer(fr)
		io.Copy(io.Discard, c)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var res *h2AttackResult
	done := make(chan error, 1)
	go func() {
		v, err := runH2Attack(ctx, []string{"-addr", addr, "-attack", attackTinyWindow, "-conns", "1", "-streams", "10",
			"-attack-path", "/file"})
		if err == nil {
			res = v.(*h2AttackResult)
		}
		done <- err
	}()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	<-again
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Frames: on the first connection SETTINGS, its ACK, 4 HEADERS and 6 WINDOW_UPDATEs, then
	// the next connection's SETTINGS.
	if res.Connections != 2 || res.Closed != 1 || res.Goaways != 1 || res.GoawayCodes["NO_ERROR"] != 1 || res.Rsts != 1 ||
		res.RstCodes["REFUSED_STREAM"] != 1 || res.Opened != 4 || res.Responses != 2 || res.Ended != 2 ||
		res.DataFrames != 4 || res.DataBytes != 4 || res.Frames != 13 || res.FirstError != errGoneAway.Error() {
		t.Errorf("%+v", res)
	}
}

// tinyWindowServer is the tiny-window test's server side: it checks each frame the attacker
// sends in answer to its own.
func tinyWindowServer(fr *http2.Framer) error {
	dec := hpack.NewDecoder(4096, nil)
	var hb bytes.Buffer
	hpack.NewEncoder(&hb).WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	status := hb.Bytes()
	// expect reads the attacker's next frames, one for each check.
	expect := func(after string, checks ...func(http2.Frame) error) error {
		for _, check := range checks {
			f, err := fr.ReadFrame()
			if err == nil {
				err = check(f)
			}
			if err != nil {
				return fmt.Errorf("after %s: %w", after, err)
			}
		}
		return nil
	}
	update := func(stream, n uint32) func(http2.Frame) error {
		return func(f http2.Frame) error {
			if wf, ok := f.(*http2.WindowUpdateFrame); !ok || wf.StreamID != stream || wf.Increment != n {
				return fmt.Errorf("%v, want WINDOW_UPDATE %d on stream %d", f, n, stream)
			}
			return nil
		}
	}
	get := func(stream uint32) func(http2.Frame) error {
		return func(f http2.Frame) error {
			hf, ok := f.(*http2.HeadersFrame)
			if !ok || hf.StreamID != stream || !hf.StreamEnded() || !hf.HeadersEnded() {
				return fmt.Errorf("%v, want the HEADERS of stream %d", f, stream)
			}
			fields, err := dec.DecodeFull(hf.HeaderBlockFragment())
			if err != nil {
				return err
			}
			if fieldValue(fields, ":method") != "GET" || fieldValue(fields, ":path") != "/file" {
				return fmt.Errorf("stream %d asks for %v", stream, fields)
			}
			return nil
		}
	}
	settings := func(f http2.Frame) error {
		sf, ok := f.(*http2.SettingsFrame)
		if !ok || sf.IsAck() {
			return fmt.Errorf("%v, want SETTINGS", f)
		}
		if v, ok := sf.Value(http2.SettingInitialWindowSize); !ok || v != 1 {
			return fmt.Errorf("INITIAL_WINDOW_SIZE %d, %v", v, ok)
		}
		return nil
	}
	ack := func(f http2.Frame) error {
		if sf, ok := f.(*http2.SettingsFrame); !ok || !sf.IsAck() {
			return fmt.Errorf("%v, want the ACK of the SETTINGS", f)
		}
		return nil
	}
	if err := expect("the preface", settings); err != nil {
		return err
	}
	// Two streams at a time, of the attacker's 10.
	if err := fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 2}); err != nil {
		return err
	}
	if err := expect("the server's SETTINGS", ack, get(1), get(3)); err != nil {
		return err
	}
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: status, EndHeaders: true})
	fr.WriteData(1, false, []byte("d"))
	if err := expect("1 byte of stream 1", update(1, 1), update(0, 1)); err != nil {
		return err
	}
	// A padded frame: its whole payload, the pad length and padding too, is given back.
	fr.WriteDataPadded(1, false, []byte("w"), []byte{0, 0})
	if err := expect("a padded frame of 4 bytes", update(1, 4), update(0, 4)); err != nil {
		return err
	}
	fr.WriteData(1, true, []byte("l"))
	if err := expect("the end of stream 1", update(0, 1), get(5)); err != nil {
		return err
	}
	fr.WriteRSTStream(3, http2.ErrCodeRefusedStream)
	if err := expect("the reset of stream 3", get(7)); err != nil {
		return err
	}
	// After a GOAWAY that leaves stream 5 only, its end is the connection's.
	fr.WriteGoAway(5, http2.ErrCodeNo, nil)
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: status, EndHeaders: true})
	fr.WriteData(5, true, []byte("x"))
	if err := expect("the end of stream 5", update(0, 1)); err != nil {
		return err
	}
	if f, err := fr.ReadFrame(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("after the GOAWAY's last stream: %v, %v; want the connection closed", f, err)
	}
	return nil
}

// TestNormalClient: the normal client's answers over h2 from net/http, a reset that fails a
// request, and a GOAWAY that still lets the request's answer come.
func TestNormalClient(t *testing.T) {
	addr, cert := h2Server(t, true, 0)
	var tf tlsFlags
	tf.on, tf.cert, tf.curves = true, cert, "x25519"
	cfg, scheme, err := h2TLS(&tf)
	if err != nil {
		t.Fatal(err)
	}
	n := &normalClient{addr: addr, path: "/hello", scheme: scheme, cfg: cfg, timeout: 5 * time.Second}
	if err := n.connect(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if lat, err := n.get(); err != nil || lat <= 0 {
			t.Fatalf("request %d: %v, %v", i, lat, err)
		}
	}
	if !strings.HasSuffix(n.res.Negotiated, ", h2") {
		t.Errorf("negotiated %q", n.res.Negotiated)
	}
	n.h.c.Close()

	answer := func(fr *http2.Framer, id uint32) {
		var hb bytes.Buffer
		hpack.NewEncoder(&hb).WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true})
		fr.WriteData(id, true, []byte("Hello World"))
	}
	fake, _ := fakeServer(t, func(i int, c net.Conn, fr *http2.Framer) {
		fr.WriteSettings()
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
				fr.WriteSettingsAck() // the client waits for it before its first request
			}
			hf, ok := f.(*http2.HeadersFrame)
			if !ok {
				continue
			}
			switch hf.StreamID {
			case 1:
				answer(fr, 1)
			case 3:
				fr.WriteRSTStream(3, http2.ErrCodeRefusedStream)
			case 5:
				fr.WriteGoAway(5, http2.ErrCodeNo, nil)
				answer(fr, 5)
			}
		}
	})
	n = &normalClient{addr: fake, path: "/hello", scheme: "http", timeout: 5 * time.Second}
	if err := n.connect(); err != nil {
		t.Fatal(err)
	}
	if _, err := n.get(); err != nil {
		t.Fatalf("stream 1: %v", err)
	}
	if _, err := n.get(); err == nil || !strings.Contains(err.Error(), "REFUSED_STREAM") {
		t.Fatalf("stream 3: %v", err)
	}
	if lat, err := n.get(); !errors.Is(err, errGoingAway) || lat <= 0 {
		t.Fatalf("stream 5: %v, %v", lat, err)
	}
}

// TestH2Abuse runs h2-abuse briefly against net/http over TLS: the attacker is a child process
// (this test binary, through TestMain), and every request of the normal client is accounted
// for, answered or failed.
func TestH2Abuse(t *testing.T) {
	addr, cert := h2Server(t, true, 0)
	for _, attack := range []string{attackReset, attackWindowUpdate, attackZeroWindow, attackTinyWindow} {
		v, err := runH2Abuse(context.Background(), []string{"-addr", addr, "-pid", strconv.Itoa(os.Getpid()),
			"-attack", attack, "-d", "300ms", "-conns", "2", "-streams", "5", "-tls", "-cert", cert})
		if err != nil {
			t.Fatalf("%s: %v", attack, err)
		}
		res := v.(*h2AbuseResult)
		nr := res.Normal
		if res.Attacker == nil || res.Attacker.Attack != attack || nr.Answered+nr.Failed != nr.Sent || nr.PaceUs != 2000 ||
			res.RSSBefore <= 0 || res.Samples == 0 || res.Attacker.Held > res.Attacker.Opened {
			t.Errorf("%s: %+v, normal %+v, attacker %+v", attack, res, nr, res.Attacker)
			continue
		}
		// On 1-byte windows net/http sends each answer of 11 bytes a byte a frame (and may end
		// a stream with an empty one).
		if a := res.Attacker; attack == attackTinyWindow &&
			(a.Ended == 0 || a.DataBytes < int64(len(peer.Hello))*a.Ended || a.DataBytes > a.DataFrames) {
			t.Errorf("tiny-window: %d streams answered whole, %d DATA frames, %d bytes", a.Ended, a.DataFrames, a.DataBytes)
		}
	}
}
