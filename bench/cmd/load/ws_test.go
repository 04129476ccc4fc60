package main

import (
	"bufio"
	"bytes"
	"testing"
	"unicode/utf8"
)

// TestFrames checks the client's framing against its own parser: a masked client frame
// unmasks to its payload, and a server frame of each length encoding parses to its header.
func TestFrames(t *testing.T) {
	for _, n := range []int{0, 5, 125, 126, 1024, 65535, 65536} {
		p := bytes.Repeat([]byte{'x'}, n)
		f := clientFrame(opBinary, n%2 == 1, p)
		if f[0]&0x0f != opBinary || f[1]&0x80 == 0 {
			t.Fatalf("%d bytes: header %x", n, f[:2])
		}
		h := len(f) - n
		key := f[h-4 : h]
		got := bytes.Clone(f[h:])
		for i := range got {
			got[i] ^= key[i&3]
		}
		if !bytes.Equal(got, p) {
			t.Fatalf("%d bytes: payload does not unmask", n)
		}
		// The same frame unmasked, as a server sends it.
		srv := append([]byte{f[0], f[1] &^ 0x80}, f[2:h-4]...)
		srv = append(srv, p...)
		sf, hl, err := parseFrame(srv)
		if err != nil || hl == 0 || sf.length != n || sf.op != opBinary || !sf.fin || sf.rsv1 != (n%2 == 1) {
			t.Fatalf("%d bytes: parsed %+v, %d, %v", n, sf, hl, err)
		}
		if _, hl, _ := parseFrame(srv[:hl-1]); hl != 0 {
			t.Fatalf("%d bytes: a cut header parsed", n)
		}
	}
}

// TestMessages checks the echo messages: the JSON text is exactly its size and UTF-8, and its
// compressed frame inflates back to it; readMessage joins a fragmented message.
func TestMessages(t *testing.T) {
	m := newMessage(1024, true)
	if len(m.data) != 1024 || !utf8.Valid(m.data) || m.data[0] != '{' || m.data[1023] != '}' {
		t.Fatalf("JSON message of %d bytes: %q...", len(m.data), m.data[:32])
	}
	z := compressMessage(m.data)
	if len(z) >= len(m.data)/2 {
		t.Errorf("the JSON text compresses to %d bytes only", len(z))
	}
	if err := m.check(serverFrame{fin: true, rsv1: true, op: opText}, z, true); err != nil {
		t.Fatal(err)
	}
	// Two fragments, a ping between them.
	var b bytes.Buffer
	b.Write([]byte{0x02, 3, 'a', 'b', 'c'})
	b.Write([]byte{0x89, 0})
	b.Write([]byte{0x80, 2, 'd', 'e'})
	f, p, err := readMessage(bufio.NewReader(&b))
	if err != nil || f.op != opBinary || !f.fin || string(p) != "abcde" {
		t.Fatalf("readMessage: %+v %q %v", f, p, err)
	}
}
