package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

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

// TestAbuseFramesMadeYouReset: each unit is the HEADERS of a GET /hello ending its stream, then
// a WINDOW_UPDATE of 0 on that stream, on stream ids 1, 3, 5, ...: the reading Framer takes it
// for what a server must answer with RST_STREAM, a stream error PROTOCOL_ERROR (RFC 9113 §6.9).
func TestAbuseFramesMadeYouReset(t *testing.T) {
	fr, a := attackFrames(t, attackMadeYouReset, 50)
	dec := hpack.NewDecoder(4096, nil)
	n := 1
	for i := 0; ; i++ {
		id := uint32(i/2*2 + 1)
		f, err := fr.ReadFrame()
		if errors.Is(err, io.EOF) {
			break
		}
		n++
		if i%2 == 1 {
			var se http2.StreamError
			if !errors.As(err, &se) || se.StreamID != id || se.Code != http2.ErrCodeProtocol {
				t.Fatalf("frame %d: %v, %v; want a zero WINDOW_UPDATE on stream %d", i, f, err, id)
			}
			continue
		}
		h, ok := f.(*http2.HeadersFrame)
		if err != nil || !ok || h.StreamID != id || !h.StreamEnded() || !h.HeadersEnded() {
			t.Fatalf("frame %d: %v, %v", i, f, err)
		}
		if p := fieldValue(decodeFields(t, dec, h.HeaderBlockFragment()), ":path"); p != "/hello" {
			t.Fatalf("frame %d: path %q", i, p)
		}
	}
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
