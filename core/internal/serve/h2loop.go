package serve

import "github.com/dwellhttp/dwell/core/internal/wire"

// h2state is what a loop keeps for HTTP/2: the scratch buffers of the heads, frames and field
// blocks it builds, one at a time.
type h2state struct {
	h2head    wire.HeadBuilder // the request head a field block is decoded into
	h2headBuf []byte           // its bytes, kept from head to head
	h2scratch []byte           // frames being built
	h2block   []byte           // a field block being encoded
	h2name    []byte           // a field name being lowered
	h2cookie  []byte           // the crumbs of a request's cookie, being joined
	h2free    []*h2stream      // streams to reuse (h2stream.recycle)
}
