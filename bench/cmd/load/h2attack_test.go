package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

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
