package http1

import (
	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/internal/alias"
)

// A conn is a serve.Socket as HTTP/1.1 serves it: the exchange of its requests, one after another.
// It is the Socket itself, seen through HTTP/1.1's methods (h1).
type conn struct{ serve.Socket }

// h1 is c as HTTP/1.1's connection.
func h1(c *serve.Socket) *conn { return alias.Outer[conn](c) }

// New returns HTTP/1.1, for a server's SetFirst.
func New() serve.First { return first{} }

// first is HTTP/1.1 as a server's First: every connection, from its first byte.
type first struct{}

// Input, Exchange and Deadline: see serve.First.
func (first) Input(c *serve.Socket)                   { h1(c).readInput() }
func (first) Exchange(c *serve.Socket) serve.Exchange { return h1(c) }
func (first) Deadline(c *serve.Socket)                { h1(c).onDeadline(c.Loop) }

// readInput reads what the socket has into the loop buffer, behind any input held from before,
// and serves the requests it completes.
func (c *conn) readInput() {
	l := c.Loop
	if c.OutputBlocked() {
		c.UpdateInterest()
		return
	}
	k := copy(l.Buf, c.In)
	c.DropSpill(&c.Loop.Loop)
	end := len(l.Buf)
	head := c.State != serve.StDrain
	if head {
		// A request head, and what follows it: what follows may stay unread in memory for as
		// long as the request's handler waits (see headRead), so no more is taken than the
		// connection's heads have been seen to need, and the kernel and the client's own flow
		// control hold the rest.
		end = min(end, k+c.headReadSize())
	}
	if k < end {
		n, ok := c.ReadSocket(l.Buf[k:end])
		if !ok {
			return
		}
		if head && n > 0 && k+n == end {
			c.growHeadRead()
		}
		k += n
	}
	c.In = l.Buf[:k]
	c.serve()
	if c.PeerEOF {
		c.OnPeerEOF()
	}
	c.Settle()
}

// Bounds on the input a connection holds while its request's handler waits (parked, detached or
// streaming its response) and nothing reads it. Every read stops near what the request needs:
// one for a request head takes the connection's head read size (a larger head takes several),
// one for a chunked body the rest of the chunk being read and headRead more (a Content-Length
// body is read straight into the handler's buffer, never past its end). So what waits in memory
// for a handler that has not read it yet — the start of its own body, or bytes past the
// request's end — is what the last read took past the head or the chunk: less than that read's
// size, which is headReadFirst for a head that a new connection's first read holds whole, and
// headRead at most (about headRead past a chunked body's end; after a drained body's read, what
// that read took, the loop's read buffer at most).
// The connection is not read again until the handler wants input: the kernel holds the rest,
// and TCP's flow control holds the client. (Over TLS, crypto/tls holds what is left of the
// record it last decrypted besides: see engine.TLS.) What is past the request's end is kept
// whatever it looks like, since the handler may hand the connection over (HandOver, a net/http
// Hijack), whose new owner gets those bytes first; if it does not, they are the next request's,
// or refused as one.
//
// Bytes once read cannot be given back to the kernel, so a connection's head reads start small:
// headReadFirst bytes take the whole head of most clients other than browsers (wrk's, curl's,
// Go's) in one call, and a keep-alive client whose heads fit makes one read a request. A read
// that fills its size says that the client sends more at once (a larger head, pipelined
// requests), so the connection's head reads grow fourfold each time one does, up to headRead:
// such a client makes a few more reads at its start, each in a turn of the loop of its own (two
// more at most, for a head or a batch of requests of up to 4 KiB), and then one a head or a
// batch, as it would with headRead from the first. They do not shrink again: on a connection
// that has grown them, the bound above is headRead's.
const (
	headReadFirst = 256
	headRead      = 4 << 10
)

// headReadSize is what c's next read for a request head takes.
func (c *conn) headReadSize() int { return max(int(c.HeadSize), headReadFirst) }

// growHeadRead grows c's head reads after one filled its size.
func (c *conn) growHeadRead() { c.HeadSize = uint16(min(4*c.headReadSize(), headRead)) }

// serve runs the requests in c.In until it runs out of input or a handler keeps the
// connection: several pipelined requests are answered in one turn, and their responses leave
// in one write. Two bounds keep one client from taking more than its share: at most
// MaxPipelined requests a turn (the rest wait for the next iteration, behind other
// connections), and no new request while the client leaves more than WriteHighWater of
// responses unread (reading resumes once it has taken half).
func (c *conn) serve() {
	c.Loop.TurnLeft = serve.MaxPipelined
	for {
		if c.OutputBlocked() {
			c.HeldBack = true // AfterSend resumes it once the client has read enough
			return
		}
		if c.Loop.TurnLeft <= 0 {
			c.Loop.Pending = append(c.Loop.Pending, c)
			return
		}
		switch c.State {
		case serve.StIdle, serve.StHead:
			if !c.nextRequest() {
				return
			}
		case serve.StDrain:
			if !c.drain() {
				return
			}
		case serve.StHandedOver:
			c.Deliver()
			return
		default:
			return
		}
	}
}
