package http1

import (
	"errors"
	"net/http"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

var errProtocolForTest = errors.New("protocol: the client broke the rules")

// endProtocol ends its connection as the client's first bytes say: "close" with Close, "fail"
// with SetErr then Close, "abort" with Abort, "fail-abort" with SetErr then Abort; anything
// else is echoed.
type endProtocol struct{}

func (endProtocol) Receive(c *serve.Conn, in []byte) int {
	switch string(in) {
	case "close":
		c.Close()
	case "fail":
		c.SetErr(errProtocolForTest)
		c.SetErr(errors.New("a second error, which does not count"))
		c.Close()
	case "abort":
		c.Abort()
	case "fail-abort":
		c.SetErr(errProtocolForTest)
		c.Abort()
	default:
		c.Write(in)
	}
	return len(in)
}
func (endProtocol) Drained(*serve.Conn)       {}
func (endProtocol) Timeout(*serve.Conn)       {}
func (endProtocol) Shutdown(c *serve.Conn)    { c.Close() }
func (endProtocol) Closed(*serve.Conn, error) {}

// TestHandOverEnd: the Done.Err of a request whose handler goes on after handing its
// connection over, until the connection closes, is how the connection ended: nil for a close
// of its protocol's own, the protocol's error when it gave one, ErrClosed when the client left.
func TestHandOverEnd(t *testing.T) {
	dones := make(chan serve.Done, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.OnDone(func(d serve.Done) { dones <- d })
		c.SetStatus(101)
		c.SetHeader("Upgrade", "end")
		if _, err := c.HandOver(endProtocol{}); err != nil {
			t.Errorf("HandOver: %v", err)
			return
		}
		c.Suspend(0) // until the close wakes it
	}, serve.Options{})
	for _, tc := range []struct {
		send string // "" for the client closing the connection
		want error
	}{
		{"close", nil},
		{"abort", nil},
		{"fail", errProtocolForTest},
		{"fail-abort", errProtocolForTest},
		{"", serve.ErrClosed},
	} {
		c := dial(t, addr)
		c.Send("GET / HTTP/1.1\r\nHost: h\r\nUpgrade: end\r\nConnection: Upgrade\r\n\r\necho")
		if resp, err := http.ReadResponse(c.R, nil); err != nil || resp.StatusCode != 101 {
			t.Fatalf("%v %v", resp, err)
		}
		if got := readN(t, c.R, 4); got != "echo" {
			t.Fatalf("%q", got)
		}
		if tc.send != "" {
			c.Send(tc.send)
		}
		c.Close() // at once, as a client gone after its last word: the protocol's close came first
		d := receive(t, "the request's Done", dones)
		if d.Status != 101 || d.Err != tc.want {
			t.Errorf("%q: Done %d %v, want 101 %v", tc.send, d.Status, d.Err, tc.want)
		}
	}
}
