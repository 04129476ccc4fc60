package deflate_test

import (
	"fmt"

	"github.com/dwellhttp/dwell/websocket/internal/deflate"
)

// A server reads the client's offers, answers with the response, and builds its compressor and
// decompressor from what was agreed.
func Example() {
	p, response, ok, err := deflate.Negotiate([]string{"permessage-deflate; client_max_window_bits"}, false)
	if err != nil {
		return // malformed: refuse the handshake, or decline every extension
	}
	fmt.Println(ok, response)

	comp := deflate.NewCompressor(!p.ServerNoContextTakeover, p.ServerMaxWindowBits)
	decomp := deflate.NewDecompressor(!p.ClientNoContextTakeover)
	payload := comp.Compress(nil, []byte("Hello, Hello, Hello"))
	msg, err := decomp.Decompress(nil, payload, 1<<20)
	fmt.Printf("%q %v\n", msg, err)
	// Output:
	// true permessage-deflate; server_no_context_takeover; client_no_context_takeover
	// "Hello, Hello, Hello" <nil>
}
