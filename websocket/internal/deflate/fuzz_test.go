package deflate

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzNegotiate: Negotiate never panics, and says what the reference (refParse, then
// refNegotiate) says; ErrMalformed comes with nothing agreed. An accepted offer's response is a
// list of one permessage-deflate extension with parameters a response may have, which, offered
// back, negotiates to the same parameters and the same response (only client_max_window_bits,
// which a response never has, goes back to 15), within the limits of §7.1.2. Lines that are
// valid alone negotiate the same joined into one (RFC 7230 §3.2.2).
func FuzzNegotiate(f *testing.F) {
	f.Add("permessage-deflate; client_max_window_bits", "")
	f.Add(`x; a="1\0", permessage-deflate; server_max_window_bits=10`, "permessage-deflate")
	f.Fuzz(func(t *testing.T, line1, line2 string) {
		values := []string{line1, line2}
		for _, allow := range []bool{false, true} {
			p, resp, ok, err := Negotiate(values, allow)
			rp, rresp, rok, rerr := reference(values, allow)
			if p != rp || resp != rresp || ok != rok || err != rerr {
				t.Fatalf("%q (allow takeover %v): %+v, %q, %v, %v; the reference %+v, %q, %v, %v",
					values, allow, p, resp, ok, err, rp, rresp, rok, rerr)
			}
			if err != nil || !ok {
				if err != nil && err != ErrMalformed || p != (Params{}) || resp != "" {
					t.Fatalf("%q: %+v, %q, %v, %v", values, p, resp, ok, err)
				}
				continue
			}
			if jp, jresp, jok, jerr := Negotiate([]string{line1 + "," + line2}, allow); jp != p || jresp != resp || !jok || jerr != nil {
				t.Fatalf("%q joined: %+v, %q, %v, %v; apart %+v, %q", values, jp, jresp, jok, jerr, p, resp)
			}
			r, err := refParse([]string{resp})
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
			back, backResp, ok, err := Negotiate([]string{resp}, allow)
			want := p
			want.ClientMaxWindowBits = 15
			if back != want || backResp != resp || !ok || err != nil {
				t.Fatalf("response %q negotiates to %+v, %q, %v, %v; want %+v", resp, back, backResp, ok, err, want)
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
