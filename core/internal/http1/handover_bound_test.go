package http1

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// amplifier answers each batch of input it is given with a block of output, as a WebSocket
// answers pings with pongs, and records whether it was ever given input while its output was
// over the high-water mark. Once it has taken total bytes it writes "END" and closes.
type amplifier struct {
	total int
	block []byte

	mu       sync.Mutex
	got      int
	overRecv int // Receive calls made while the output was over the high-water mark
	over     chan struct{}
	overOnce sync.Once
	closed   chan error
}

func newAmplifier(total, block int) *amplifier {
	return &amplifier{total: total, block: make([]byte, block), over: make(chan struct{}), closed: make(chan error, 1)}
}

func (p *amplifier) Receive(c *serve.Conn, in []byte) int {
	p.mu.Lock()
	if c.Buffered() > c.HighWater() {
		p.overRecv++
	}
	p.got += len(in)
	done := p.got >= p.total
	p.mu.Unlock()
	c.Write(p.block)
	if c.Buffered() > c.HighWater() {
		p.overOnce.Do(func() { close(p.over) })
	}
	if done {
		c.Write([]byte("END"))
		c.Close()
	}
	return len(in)
}
func (p *amplifier) Drained(*serve.Conn)             {}
func (p *amplifier) Timeout(*serve.Conn)             {}
func (p *amplifier) Shutdown(c *serve.Conn)          { c.Close() }
func (p *amplifier) Closed(_ *serve.Conn, err error) { p.closed <- err }
func (p *amplifier) counts() (got, overRecv int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.got, p.overRecv
}

// TestHandedOverOutputHoldsInputBack: a client that sends without reading what its input makes
// the server write (a ping flood without reading the pongs) cannot grow the server's output past
// the high-water mark and what one read's answer adds: a handed-over connection over the mark
// is not read (TCP holds the client back) until its output has drained, as HTTP's is. Every byte
// sent still arrives, in order, once the client reads. Over TLS too, whose layer reads ahead.
func TestHandedOverOutputHoldsInputBack(t *testing.T) {
	const highWater = 64 << 10
	for _, tr := range []string{"plain", "TLS"} {
		t.Run(tr, func(t *testing.T) {
			p := newAmplifier(4<<20, 256<<10)
			h := func(c *serve.Ctx) {
				if _, err := c.HandOver(p); err != nil {
					t.Errorf("HandOver: %v", err)
				}
			}
			o := serve.Options{WriteHighWater: highWater}
			var conn net.Conn
			var r io.Reader
			if tr == "TLS" {
				pki := newPKI(t)
				_, addr := startTLS(t, pki, h, o)
				tc, br := tlsDial(t, addr, pki.clientConfig(0))
				conn, r = tc, br
			} else {
				_, addr := startServer(t, h, o)
				rc := dial(t, addr)
				conn, r = rc.TCPConn, rc.R
			}
			if _, err := conn.Write([]byte("GET / HTTP/1.1\r\nHost: h\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
			sent := make(chan error, 1)
			go func() {
				chunk := bytes.Repeat([]byte{'x'}, 1<<10)
				for range p.total / len(chunk) {
					if _, err := conn.Write(chunk); err != nil {
						sent <- err
						return
					}
				}
				sent <- nil
			}()
			// Only once the output is over the mark does the client read: until then the
			// server's reading is what is being tested.
			receive(t, "the output over the high-water mark", p.over)
			out, err := io.ReadAll(r)
			if err != nil && !isClosedErr(err) {
				t.Fatalf("reading the output: %v", err)
			}
			if err := receive(t, "the writer", sent); err != nil {
				t.Fatalf("writing the input: %v", err)
			}
			receive(t, "Closed", p.closed)
			got, overRecv := p.counts()
			if got != p.total || !bytes.HasSuffix(out, []byte("END")) {
				t.Fatalf("the protocol took %d of %d bytes; output ends %q", got, p.total, out[max(len(out)-8, 0):])
			}
			if overRecv != 0 {
				t.Errorf("the protocol was given input %d times while its output was over the high-water mark", overRecv)
			}
		})
	}
}

// isClosedErr reports whether err is the end of a connection the server closed under a reader
// (a reset, when the client's last bytes were still unread by the server's lingering close).
func isClosedErr(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne)
}
