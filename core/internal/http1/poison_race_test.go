//go:build race

package http1

import (
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/internal/bufpool"
)

// TestRetainedBorrowedValueIsPoisoned: under the race detector (make test), a borrowed value
// kept past its request — in a map a later handler reads, say — reads as the poison pattern,
// a string a caller made of it without copying included, instead of silently turning into
// another request's bytes later.
func TestRetainedBorrowedValueIsPoisoned(t *testing.T) {
	var name []byte // kept by the first request, read by the second: both on the loop
	var path string
	_, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/keep" {
			name, _ = c.Bytes().Header("X-Name")
			path = serve.BorrowString(c.Bytes().Path())
			c.WriteString("kept")
			return
		}
		c.WriteString(string(name) + "|" + path)
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET /keep HTTP/1.1\r\nHost: h\r\nX-Name: bob\r\n\r\n")
	c.Response("GET")
	c.Send("GET /read HTTP/1.1\r\nHost: h\r\nX-Name: eve\r\n\r\n")
	_, body := c.Response("GET")
	kept, keptPath, _ := strings.Cut(body, "|")
	for what, v := range map[string]string{"Bytes().Header": kept, "a string of Bytes().Path": keptPath} {
		if len(v) == 0 || !strings.Contains(strings.Repeat(bufpool.PoisonPattern, 3), v) {
			t.Errorf("retained %s reads %q after its request, want the poison %q", what, v, bufpool.PoisonPattern)
		}
	}
}
