package h2

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// FuzzFrames reads its input as a client's frames, as a server would: every header checked,
// every payload of a known type taken apart. Nothing may panic; every error is a *ConnError or
// a *StreamError with a code RFC 9113 defines, and Check's are all *ConnError; a frame header is sent back as read, but for the
// reserved bit; a DATA frame without padding and a SETTINGS frame are sent back whole as read.
// The corpus is testdata/fuzz/FuzzFrames.
func FuzzFrames(f *testing.F) {
	f.Add(AppendSettings(AppendPing(nil, false, [8]byte{1, 2, 3, 4, 5, 6, 7, 8}), Setting{SettingMaxFrameSize, 1 << 20}))
	f.Add(AppendHeaders(AppendData(nil, 1, true, []byte("hello")), 3, false, bytes.Repeat([]byte{0x82}, 40), 16))
	f.Fuzz(func(t *testing.T, in []byte) {
		for len(in) >= HeaderLen {
			h := ParseHeader(in)
			if got := AppendHeader(nil, h); !bytes.Equal(got[:5], in[:5]) || !bytes.Equal(got[6:HeaderLen], in[6:HeaderLen]) || got[5] != in[5]&0x7f {
				t.Fatalf("header % x sent back as % x", in[:HeaderLen], got)
			}
			err := h.Check(MinMaxFrameSize)
			if err == nil && int(h.Length) > len(in)-HeaderLen {
				return // the rest of the frame has not come
			}
			if err != nil {
				checkErr(t, err)
				if ce := (*ConnError)(nil); !errors.As(err, &ce) {
					t.Fatalf("Check: %v, not a connection error: the frames behind it would be lost", err)
				}
				return // a connection error ends it
			}
			frame, p := in[:HeaderLen+h.Length], in[HeaderLen:HeaderLen+h.Length]
			in = in[HeaderLen+h.Length:]
			switch h.Type {
			case TypeData:
				d, err := Data(h, p)
				checkErr(t, err)
				if err == nil && !h.Flags.Has(FlagPadded) {
					if got := AppendData(nil, h.StreamID, h.Flags.Has(FlagEndStream), d); !bytes.Equal(got[HeaderLen:], frame[HeaderLen:]) {
						t.Fatalf("DATA sent back as % x, read % x", got, frame)
					}
				}
			case TypeHeaders:
				_, _, err := Headers(h, p)
				checkErr(t, err)
			case TypePriority:
				_, err := PriorityFrame(h, p)
				checkErr(t, err)
			case TypeRSTStream:
				RSTStream(p)
			case TypeSettings:
				var all []Setting
				err := Settings(p, func(s Setting) error { all = append(all, s); return nil })
				checkErr(t, err)
				if err == nil && !h.Flags.Has(FlagAck) {
					if got := AppendSettings(nil, all...); !bytes.Equal(got[HeaderLen:], p) {
						t.Fatalf("SETTINGS sent back as % x, read % x", got[HeaderLen:], p)
					}
				}
			case TypePing:
				if d := Ping(p); !bytes.Equal(AppendPing(nil, true, d)[HeaderLen:], p) {
					t.Fatal("PING's data not sent back as read")
				}
			case TypeGoAway:
				last, code, debug := GoAway(p)
				if got := AppendGoAway(nil, last, code, debug); !bytes.Equal(got[HeaderLen+4:], p[4:]) {
					t.Fatal("GOAWAY not sent back as read")
				}
			case TypeWindowUpdate:
				_, err := WindowUpdate(h, p)
				checkErr(t, err)
			}
		}
	})
}

// checkErr fails the test unless err is nil or one of the package's errors with a defined code.
func checkErr(t *testing.T, err error) {
	t.Helper()
	var ce *ConnError
	var se *StreamError
	switch {
	case err == nil:
	case errors.As(err, &ce):
		if ce.Code > HTTP11Required || ce.Reason == "" {
			t.Fatalf("connection error %v", err)
		}
	case errors.As(err, &se):
		if se.Code > HTTP11Required || se.Reason == "" || se.StreamID == 0 {
			t.Fatalf("stream error %v", err)
		}
	default:
		t.Fatalf("an error of another kind: %v", err)
	}
}

// FuzzHPACK decodes its input as two field blocks of one connection (the first byte says where
// the first ends), as a server would: nothing may panic; an error is COMPRESSION_ERROR; the
// dynamic table stays within its size, and its buffer within twice that; the fields of a
// block, appended again by the server's appenders, decode to the same fields; and checked as a
// request's, a malformed block is a stream error. The corpus is
// testdata/fuzz/FuzzHPACK.
func FuzzHPACK(f *testing.F) {
	for _, h := range []string{
		"14828684410f7777772e6578616d706c652e636f6d828684be58086e6f2d6361636865",
		"11828684418cf1e3c2e5f23a6ba0ab90f4ff828684be5886a8eb10649cbf",
		"023fe11f828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf",
	} {
		b, _ := hex.DecodeString(h)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		cut := min(int(in[0]), len(in)-1)
		d := NewDecoder(4096)
		for _, block := range [][]byte{in[1 : 1+cut], in[1+cut:]} {
			var fields, back strings.Builder
			var again []byte
			check := RequestCheck{StreamID: 1, ConnectProtocol: true}
			var malformed error
			err := d.Decode(block, func(name, value []byte, sensitive bool) error {
				fmt.Fprintf(&fields, "%q: %q %v\n", name, value, sensitive)
				again = AppendField(again, name, value, sensitive)
				if malformed == nil {
					malformed = check.Field(name, value)
				}
				return nil
			})
			if malformed == nil {
				malformed = check.End()
			}
			var se *StreamError
			if malformed != nil && (!errors.As(malformed, &se) || se.Code != ProtocolError || se.StreamID != 1) {
				t.Fatalf("a malformed request as %v, want a stream PROTOCOL_ERROR", malformed)
			}
			var ce *ConnError
			if err != nil && (!errors.As(err, &ce) || ce.Code != CompressionError) {
				t.Fatalf("an error other than COMPRESSION_ERROR: %v", err)
			}
			if d.used > d.size || d.size > d.max || len(d.data) > 2*int(d.max) {
				t.Fatalf("table: %d used of %d (max %d), %d bytes held", d.used, d.size, d.max, len(d.data))
			}
			if err != nil {
				return
			}
			if err := NewDecoder(0).Decode(again, func(name, value []byte, sensitive bool) error {
				fmt.Fprintf(&back, "%q: %q %v\n", name, value, sensitive)
				return nil
			}); err != nil || back.String() != fields.String() {
				t.Fatalf("appended again, the fields decode to %q, %v; want %q", back.String(), err, fields.String())
			}
		}
	})
}
