package http2

import (
	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/h2"
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

// offersH2 reports whether c may speak HTTP/2 (Options.DisableHTTP2, DisableH2C).
func offersH2(c *serve.Socket) bool {
	o := c.Loop.Opts
	return !o.DisableHTTP2 && (c.Secure() || !o.DisableH2C)
}

// Chooses looks at the first bytes of a connection that has begun no request yet, in, for
// HTTP/2's client preface, which no HTTP/1.1 request begins with: h2c with prior knowledge, or
// the "h2" a TLS client chose by ALPN. It reports whether the connection is not HTTP/1.1's to
// serve: it speaks HTTP/2 now, or its preface is still arriving, or a client that chose HTTP/2
// by ALPN sent something else — no HTTP/1.1 answer means anything to it (RFC 9113 §3.4), and
// it is closed. Once a request has begun, a preface can no longer come, and it is not asked.
func (h2mux) Chooses(c *serve.Socket, in []byte) bool {
	if !offersH2(c) {
		return false
	}
	n := min(len(in), len(h2.ClientPreface))
	if string(in[:n]) == h2.ClientPreface[:n] {
		if n == len(h2.ClientPreface) {
			startH2(c)
		}
		return true
	}
	if c.Secure() && c.Loop.TLS.Protocol(int(c.FD)) == "h2" {
		c.Close(serve.ErrClosed)
		return true
	}
	return false
}

// MayBeDamagedPreface reports whether a first line that names no HTTP/1.x version at all may
// be a damaged HTTP/2 preface, on a port that speaks h2c with prior knowledge: its client
// cannot read an HTTP/1.1 answer, and RFC 9113 §3.4 lets the connection close without a word.
// (A malformed line that names HTTP/1.x is an HTTP/1.x client's mistake: it gets its 400, as on
// every other port; so does any line after a request.)
func (h2mux) MayBeDamagedPreface(c *serve.Socket) bool { return offersH2(c) && !c.Secure() }

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
