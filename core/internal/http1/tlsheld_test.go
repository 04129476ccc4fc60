package http1

import (
	"bytes"
	"io"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// doubler is a Protocol that answers each byte it receives with two, written in a task of the
// loop's rather than in Receive, as a broadcast would be: its output outgrows the high-water
// mark outside its own turn, while its client, busy sending, reads nothing yet.
type doubler struct{}

func (doubler) Receive(c *serve.Conn, in []byte) int {
	b := append([]byte(nil), in...)
	c.Loop().Post(func() {
		c.Write(b)
		c.Write(b)
	})
	return len(in)
}
func (doubler) Drained(*serve.Conn)       {}
func (doubler) Timeout(*serve.Conn)       {}
func (doubler) Shutdown(c *serve.Conn)    { c.Close() }
func (doubler) Closed(*serve.Conn, error) {}

// TestTLSHeldBackInputResumes: over TLS, a handed-over connection whose output went over the
// high-water mark while crypto/tls held input of the client's is read again once its output
// drains — from what crypto/tls holds, which no readiness of the socket announces — and every
// byte the client sent is answered.
func TestTLSHeldBackInputResumes(t *testing.T) {
	p := newPKI(t)
	_, addr := startTLS(t, p, func(c *serve.Ctx) {
		if _, err := c.HandOver(doubler{}); err != nil {
			t.Error(err)
		}
	}, serve.Options{WriteHighWater: 16 << 10})
	c, br := tlsDial(t, addr, p.clientConfig(0))
	c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	const n = 1 << 20
	sent := bytes.Repeat([]byte("0123456789abcdef"), n/16)
	go c.Write(sent) // all at once, while nothing is read: the server holds back
	got := make([]byte, 2*n)
	if _, err := io.ReadFull(br, got); err != nil {
		t.Fatalf("after %d bytes of %d: %v", len(got), 2*n, err)
	}
}
