package deflate

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/internal/syntax"
)

// FuzzParseExtensions: ParseExtensions never panics; what it accepts is tokens, and written
// back with Extension.String it parses to the same; Negotiate on it never panics, and its
// response is a permessage-deflate extension that parses, with parameters it may send.
func FuzzParseExtensions(f *testing.F) {
	f.Add("permessage-deflate; client_max_window_bits", "")
	f.Add(`x; a="1\0", permessage-deflate; server_max_window_bits=10`, "permessage-deflate")
	f.Fuzz(func(t *testing.T, line1, line2 string) {
		exts, err := ParseExtensions([]string{line1, line2})
		if err != nil {
			if exts != nil || err != ErrMalformed {
				t.Fatalf("%+v, %v", exts, err)
			}
			return
		}
		var written []string
		for _, e := range exts {
			if !syntax.IsToken(e.Name) {
				t.Fatalf("name %q", e.Name)
			}
			for _, p := range e.Params {
				if !syntax.IsToken(p.Name) || p.HasValue && !syntax.IsToken(p.Value) || !p.HasValue && p.Value != "" {
					t.Fatalf("parameter %+v", p)
				}
			}
			written = append(written, e.String())
		}
		back, err := ParseExtensions([]string{strings.Join(written, ", ")})
		if err != nil || !reflect.DeepEqual(back, exts) {
			t.Fatalf("%q parsed as %+v; written as %q, parsed back as %+v, %v", []string{line1, line2}, exts, written, back, err)
		}
		for _, allow := range []bool{false, true} {
			p, resp, ok := Negotiate(exts, allow)
			if !ok {
				continue
			}
			r, err := ParseExtensions([]string{resp})
			if err != nil || len(r) != 1 || r[0].Name != Name {
				t.Fatalf("response %q: %+v, %v", resp, r, err)
			}
			for _, prm := range r[0].Params {
				switch prm.Name {
				case "server_no_context_takeover", "client_no_context_takeover", "server_max_window_bits":
				default:
					t.Fatalf("response %q", resp)
				}
			}
			if p.ServerMaxWindowBits < 8 || p.ServerMaxWindowBits > 15 || p.ClientMaxWindowBits < 8 || p.ClientMaxWindowBits > 15 ||
				!allow && (!p.ServerNoContextTakeover || !p.ClientNoContextTakeover) {
				t.Fatalf("agreed %+v", p)
			}
		}
	})
}

// FuzzDecompress: on arbitrary payloads Decompress never panics and never returns more than
// the limit; what it accepts, a plain flate.Reader reads the same (RFC 7692 §7.2.2); with
// context takeover a second message through the same Decompressor works as well.
func FuzzDecompress(f *testing.F) {
	f.Add([]byte("\xf2\x48\xcd\xc9\xc9\x07\x00"), uint16(100))
	f.Add([]byte("\xf2\x00\x11\x00\x00"), uint16(5))
	f.Fuzz(func(t *testing.T, payload []byte, limit uint16) {
		var d Decompressor
		out, err := d.Decompress([]byte("x"), payload, int(limit))
		if len(out) > 1+int(limit) || out[0] != 'x' {
			t.Fatalf("%d bytes for a limit of %d", len(out)-1, limit)
		}
		if err != nil {
			if err != ErrTooLarge && err != ErrCorrupt || len(out) != 1 {
				t.Fatalf("%v with %d bytes", err, len(out)-1)
			}
			return
		}
		if len(payload) > 0 {
			plain, perr := plainInflate(payload)
			if perr != nil || !bytes.Equal(plain, out[1:]) {
				t.Fatalf("flate.Reader: %q, %v; Decompress %q", plain, perr, out[1:])
			}
		}
		k := NewDecompressor(true)
		first, err1 := k.Decompress(nil, payload, int(limit))
		second, err2 := k.Decompress(nil, payload, 2*int(limit))
		if err1 != nil || !bytes.Equal(first, out[1:]) || len(second) > 2*int(limit) ||
			err2 != nil && err2 != ErrTooLarge && err2 != ErrCorrupt {
			t.Fatalf("with takeover: %q, %v; then %d bytes, %v", first, err1, len(second), err2)
		}
	})
}

// FuzzRoundTrip: every Compressor's output inflates back to the message, in a sequence of
// messages with and without context takeover; below a 15-bit window it has no back-reference.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("Hello"), []byte(strings.Repeat("Hello, Hello, ", 20)), uint8(0))
	f.Add([]byte{}, []byte("\x00\x01\x02"), uint8(3))
	f.Fuzz(func(t *testing.T, a, b []byte, mode uint8) {
		m := modes[int(mode)%len(modes)]
		c, d := NewCompressor(m.takeover, m.bits), NewDecompressor(m.takeover)
		defer c.Release() // a writer kept for takeover is 1.2 MB: reuse it
		for _, msg := range [][]byte{a, b, a} {
			payload := c.Compress(nil, msg)
			out, err := d.Decompress(nil, payload, len(msg))
			if err != nil || !bytes.Equal(out, msg) {
				t.Fatalf("%s: %q came back as %q, %v", m.name, msg, out, err)
			}
			if m.bits != 0 && m.bits < 15 {
				if lit, err := decodeLiterals(append(payload, syncTail...)); err != nil || !bytes.Equal(lit, msg) {
					t.Fatalf("%s: %q: literals %q, %v", m.name, msg, lit, err)
				}
			}
		}
	})
}
