package body_test

import (
	"crypto/sha256"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/coretest"
)

// rawConn is a test client speaking bytes, so that framing, pipelining and pacing are exact.
type rawConn struct{ *coretest.Conn }

func dial(t testing.TB, addr string) *rawConn {
	t.Helper()
	return &rawConn{coretest.Dial(t, addr)}
}

// write sends s whole, or one byte per write so that the server sees every possible split. It
// reports errors rather than failing, so that it can run on its own goroutine.
func (c *rawConn) write(s string, bytewise bool) error {
	if !bytewise {
		_, err := io.WriteString(c.TCPConn, s)
		return err
	}
	for i := 0; i < len(s); i++ {
		if _, err := c.Write([]byte{s[i]}); err != nil {
			return err
		}
	}
	return nil
}

// expectNothing checks that the server sent nothing (yet): nothing comes within d. Call it once
// the test has shown that whatever the server would have sent by now has been sent; then d is
// only how long to look.
func (c *rawConn) expectNothing(d time.Duration) {
	c.T.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	defer c.SetReadDeadline(time.Now().Add(coretest.Patience))
	if b, err := c.R.Peek(1); err == nil {
		c.T.Fatalf("unexpected bytes from the server: %q", b)
	}
}

// payload is n deterministic bytes of every value, CR, LF and digits included, so that body
// bytes that look like framing are exercised.
func payload(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// digest is what echo handlers report: the length and a short hash.
func digest(b []byte) string {
	h := sha256.Sum256(b)
	return fmt.Sprintf("n=%d sha=%x", len(b), h[:6])
}

// chunked encodes b with the chunked coding, in chunks cycling through sizes, followed by
// the trailer lines (each "Name: value").
func chunked(b []byte, sizes []int, trailers ...string) string {
	var sb strings.Builder
	for i := 0; len(b) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(b))
		fmt.Fprintf(&sb, "%x\r\n", n)
		sb.Write(b[:n])
		sb.WriteString("\r\n")
		b = b[n:]
	}
	sb.WriteString("0\r\n")
	for _, t := range trailers {
		sb.WriteString(t + "\r\n")
	}
	sb.WriteString("\r\n")
	return sb.String()
}

// post builds a POST request carrying b with a Content-Length, or chunked with a trailer.
func post(path string, b []byte, isChunked bool, extra string) string {
	if isChunked {
		return "POST " + path + " HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n" + extra + "\r\n" +
			chunked(b, []int{1, 100, 4096, 70000, 3}, "X-Check: "+digest(b))
	}
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n%s\r\n%s", path, len(b), extra, b)
}
