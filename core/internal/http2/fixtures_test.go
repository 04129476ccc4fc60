package http2

import (
	"bytes"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// echoProtocol echoes what it receives, answering "bye" with a close and "big" with a megabyte,
// and records its calls.
type echoProtocol struct {
	mu     sync.Mutex
	calls  []string
	closed chan error
	prefix string
}

func newEcho(prefix string) *echoProtocol {
	return &echoProtocol{closed: make(chan error, 1), prefix: prefix}
}

func (p *echoProtocol) note(s string) {
	p.mu.Lock()
	p.calls = append(p.calls, s)
	p.mu.Unlock()
}

func (p *echoProtocol) Receive(c *serve.Conn, in []byte) int {
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

func (p *echoProtocol) Drained(c *serve.Conn) {
	p.note("drained")
	c.Write([]byte("drained"))
}

func (p *echoProtocol) Timeout(c *serve.Conn) {
	p.note("timeout")
	c.Write([]byte("timeout"))
}

func (p *echoProtocol) Shutdown(c *serve.Conn) {
	p.note("shutdown")
	c.Write([]byte("going away"))
	c.Close()
}

func (p *echoProtocol) Closed(c *serve.Conn, err error) { p.closed <- err }

// A lineProtocol takes whole lines only, echoing each as "<line>;", and leaves a partial line
// to be given again with what arrives next. With none set, it takes nothing at all.
type lineProtocol struct {
	echoProtocol
	none bool
}

func newLines(none bool) *lineProtocol {
	return &lineProtocol{echoProtocol: echoProtocol{closed: make(chan error, 1)}, none: none}
}

func (p *lineProtocol) Receive(c *serve.Conn, in []byte) int {
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

// panicky is a Protocol that panics in the method named at (Receive: for any input but "ok"),
// and otherwise echoes what it receives — "big" with a megabyte (for Drained), "timeout" by setting a timeout (for Timeout),
// "bye" with a close (for Closed). It counts its Closed calls and sends each one's error.
type panicky struct {
	at      string
	closed  chan error
	closeds atomic.Int32
}

func newPanicky(at string) *panicky { return &panicky{at: at, closed: make(chan error, 4)} }

func (p *panicky) maybe(method string) {
	if p.at == method {
		panic("protocol panics in " + method)
	}
}

func (p *panicky) Receive(c *serve.Conn, in []byte) int {
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

func (p *panicky) Drained(*serve.Conn) { p.maybe("Drained") }

func (p *panicky) Timeout(*serve.Conn) { p.maybe("Timeout") }

func (p *panicky) Shutdown(c *serve.Conn) {
	p.maybe("Shutdown")
	c.Close()
}

func (p *panicky) Closed(_ *serve.Conn, err error) {
	p.closeds.Add(1)
	p.closed <- err
	p.maybe("Closed")
}

// measureStallThreshold turns the stall detector off in the servers whose memory is measured.
// On a loaded machine code that waits for a CPU can outlast the threshold, and what the
// detector then takes to look into it (a goroutine profile, a note with a stack, a log line) is
// heap that no parked request holds, there or not with the scheduling. (A detector that dumped
// every goroutine's stack, 2 MB with 2,000 parked coroutines, and held it until its loop logged
// it, put the coroutine figure 1 KB per request over its budget in 2 runs of 128 under load.)
const measureStallThreshold = -1
