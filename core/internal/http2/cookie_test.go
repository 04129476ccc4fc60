package http2

import (
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestH2CookieCrumbs: the crumbs of a cookie, each a field of its own (RFC 9113 §8.2.3), and
// wherever they are among the other fields, reach the handler as one Cookie field joined with
// "; " in their order.
func TestH2CookieCrumbs(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		var n int
		for name := range c.Headers() {
			if strings.EqualFold(name, "cookie") {
				n++
			}
		}
		c.WriteString(c.Header("Cookie") + " " + c.Header("Accept"))
		c.SetHeader("X-Cookies", strings.Repeat("c", n))
	}, serve.Options{})
	c := dialH2(t, addr)
	c.request(1, true, ":method", "GET", ":scheme", "http", ":authority", "h", ":path", "/",
		"cookie", "a=1", "accept", "*/*", "cookie", "b=2", "cookie", "c=3")
	r := c.response(1)
	if string(r.body) != "a=1; b=2; c=3 */*" || r.fields["x-cookies"] != "c" {
		t.Fatalf("the handler saw %q, in %d Cookie fields; want \"a=1; b=2; c=3 */*\" in one", r.body, len(r.fields["x-cookies"]))
	}
}
