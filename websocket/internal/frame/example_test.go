package frame_test

import (
	"fmt"

	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// A reader parses a header once enough bytes have arrived, then unmasks the payload, which may
// arrive in pieces.
func Example() {
	in := []byte("\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58") // RFC 6455 §5.7: a masked "Hello"
	h, n, err := frame.Parse(in[:4])
	fmt.Println(n, err) // not all of the header yet
	h, n, _ = frame.Parse(in)
	payload := in[n : n+int(h.Length)]
	pos := frame.Mask(h.Key, 0, payload[:2])
	frame.Mask(h.Key, pos, payload[2:])
	fmt.Printf("%v fin=%v %q\n", h.Opcode, h.Fin, payload)
	// Output:
	// 0 <nil>
	// text fin=true "Hello"
}
