package http2

import (
	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/core/internal/wire"
	"github.com/dwellhttp/dwell/internal/alias"
)

// New returns HTTP/2 as a server's Multiplexer (serve.Server.SetMultiplexer).
func New() serve.Multiplexer { return h2mux{} }

// h2mux is HTTP/2 as the server's Multiplexer.
type h2mux struct{}

// ALPN is the protocol a TLS client chooses HTTP/2 by.
func (h2mux) ALPN() string { return "h2" }

// NewLoop makes what a loop keeps for HTTP/2.
func (h2mux) NewLoop(*serve.Loop) any { return &h2state{} }

// Deadline acts on the deadline of a stream whose timer is due.
func (h2mux) Deadline(t *engine.Timer, l *serve.Loop) { alias.Outer[h2stream](t).onDeadline(l) }

// h2loop is what loop l keeps for HTTP/2.
func h2loop(l *serve.Loop) *h2state { return l.Mux.(*h2state) }

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
