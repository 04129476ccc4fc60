package servetest

import (
	"bytes"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// Echo is a Protocol that echoes what it receives behind its prefix, answering "bye" with a
// close and "big" with a megabyte, and records its calls.
type Echo struct {
	Done chan error // the error of its Closed call

	prefix string
	mu     sync.Mutex
	calls  []string
}

// NewEcho returns an Echo that puts prefix in front of what it echoes.
func NewEcho(prefix string) *Echo { return &Echo{Done: make(chan error, 1), prefix: prefix} }

// Calls returns the calls made so far: "receive <input>", "drained", "timeout", "shutdown".
func (p *Echo) Calls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...)
}

func (p *Echo) note(s string) {
	p.mu.Lock()
	p.calls = append(p.calls, s)
	p.mu.Unlock()
}

// Receive notes the input and answers it (see Echo).
func (p *Echo) Receive(c *serve.Conn, in []byte) int {
	p.note("receive " + string(in))
	switch string(in) {
	case "bye":
		c.Close()
	case "big":
		c.Write(make([]byte, 1<<20))
	default:
		c.Write([]byte(p.prefix + string(in)))
	}
	return len(in)
}

// Drained writes "drained".
func (p *Echo) Drained(c *serve.Conn) {
	p.note("drained")
	c.Write([]byte("drained"))
}

// Timeout writes "timeout".
func (p *Echo) Timeout(c *serve.Conn) {
	p.note("timeout")
	c.Write([]byte("timeout"))
}

// Shutdown writes "going away" and closes.
func (p *Echo) Shutdown(c *serve.Conn) {
	p.note("shutdown")
	c.Write([]byte("going away"))
	c.Close()
}

// Closed sends err on Done.
func (p *Echo) Closed(c *serve.Conn, err error) { p.Done <- err }

// Lines is an Echo that takes whole lines only, echoing each as "<line>;", and leaves a partial
// line to be given again with what arrives next; or, made with none, takes nothing at all.
type Lines struct {
	*Echo
	none bool
}

// NewLines returns a Lines; with none, it takes nothing.
func NewLines(none bool) *Lines { return &Lines{Echo: NewEcho(""), none: none} }

// Receive echoes the whole lines of in and takes them, leaving a partial line.
func (p *Lines) Receive(c *serve.Conn, in []byte) int {
	if p.none {
		return 0
	}
	end := bytes.LastIndexByte(in, '\n') + 1
	for _, line := range bytes.Split(in[:end], []byte("\n")) {
		if len(line) > 0 {
			c.Write(append(line, ';'))
		}
	}
	return end
}

// Panicky is a Protocol that panics in the method named at (Receive: for any input but "ok"),
// and otherwise echoes what it receives — "big" with a megabyte (for Drained), "timeout" by
// setting a timeout (for Timeout), "bye" with a close (for Closed). It counts its Closed calls
// and sends each one's error on Done.
type Panicky struct {
	Done    chan error
	Closeds atomic.Int32

	at string
}

// NewPanicky returns a Panicky that panics in the method named at.
func NewPanicky(at string) *Panicky { return &Panicky{at: at, Done: make(chan error, 4)} }

func (p *Panicky) maybe(method string) {
	if p.at == method {
		panic("protocol panics in " + method)
	}
}

// Receive panics unless in is "ok" (with at "Receive"), else answers it (see Panicky).
func (p *Panicky) Receive(c *serve.Conn, in []byte) int {
	if string(in) != "ok" {
		p.maybe("Receive")
	}
	switch string(in) {
	case "big":
		c.Write(make([]byte, 1<<20))
	case "timeout":
		c.SetTimeout(time.Millisecond)
	case "bye":
		c.Close()
	default:
		c.Write(in)
	}
	return len(in)
}

// Drained panics with at "Drained".
func (p *Panicky) Drained(*serve.Conn) { p.maybe("Drained") }

// Timeout panics with at "Timeout".
func (p *Panicky) Timeout(*serve.Conn) { p.maybe("Timeout") }

// Shutdown panics with at "Shutdown", else closes.
func (p *Panicky) Shutdown(c *serve.Conn) {
	p.maybe("Shutdown")
	c.Close()
}

// Closed counts the call and sends err on Done, then panics with at "Closed".
func (p *Panicky) Closed(_ *serve.Conn, err error) {
	p.Closeds.Add(1)
	p.Done <- err
	p.maybe("Closed")
}
