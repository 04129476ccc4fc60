package body

import (
	"bytes"
	"io"
	"testing"
)

// chunks reads from b in pieces of the sizes sizes gives, in turn (a 0 counts as 1).
type chunks struct {
	b     []byte
	sizes []byte
	next  int // the index in sizes of the next read's size
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := 1
	if len(c.sizes) > 0 {
		k = max(1, int(c.sizes[c.next%len(c.sizes)]))
		c.next++
	}
	n := copy(p[:min(len(p), k)], c.b)
	c.b = c.b[n:]
	return n, nil
}

// FuzzCloseWatch: however the body's bytes are split into reads, a closeWatch passes them all
// on unchanged and ends with io.EOF exactly when the close delimiter is in the body at a line's
// start, with io.ErrUnexpectedEOF otherwise.
func FuzzCloseWatch(f *testing.F) {
	f.Add([]byte("--B\r\n\r\nx\r\n--B--\r\n"), []byte{3}, "B")
	f.Add([]byte("--B\r\n\r\nx\r\n--B\r\n"), []byte{1}, "B")
	f.Add([]byte("--B--"), []byte{2, 5}, "B")
	f.Add([]byte("x--B--\n--B-"), []byte{4}, "B")
	f.Add([]byte("\n--abc--"), []byte{7, 1}, "abc")
	f.Fuzz(func(t *testing.T, body, sizes []byte, boundary string) {
		if boundary == "" || len(boundary) > 70 {
			return
		}
		w := newCloseWatch(&chunks{b: body, sizes: sizes}, boundary)
		got, err := io.ReadAll(w)
		closed := bytes.Contains(append([]byte("\n"), body...), []byte("\n--"+boundary+"--"))
		if !bytes.Equal(got, body) {
			t.Fatalf("read %q of %q", got, body)
		}
		if want := map[bool]error{true: nil, false: io.ErrUnexpectedEOF}[closed]; err != want {
			t.Fatalf("%q by %v, boundary %q: %v, want %v", body, sizes, boundary, err, want)
		}
	})
}
