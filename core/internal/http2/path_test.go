package http2

import (
	"testing"

	"github.com/dwellhttp/dwell/core/internal/h2"
	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestH2PathForms: a request's :path is origin-form, or * for OPTIONS (RFC 9113 §8.3.1). An
// absolute-form one, whose authority would stand in for :authority and the Host checked
// against it, is malformed: its stream is reset (PROTOCOL_ERROR) before any handler sees it, as
// is * for another method, and the connection goes on serving — OPTIONS * among the rest.
func TestH2PathForms(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.WriteString(c.Method() + " " + c.Target() + " for " + c.Host())
	}, serve.Options{})
	c := dialH2(t, addr)
	c.request(1, true, ":method", "GET", ":scheme", "http", ":authority", "localhost", ":path", "http://evil.example/x")
	if r := c.response(1); !r.rst || r.code != h2.ProtocolError || r.status != 0 {
		t.Fatalf("absolute-form :path: status %d, body %q, reset %v (%v)", r.status, r.body, r.rst, r.code)
	}
	c.request(3, true, ":method", "GET", ":scheme", "http", ":authority", "localhost", ":path", "*")
	if r := c.response(3); !r.rst || r.code != h2.ProtocolError || r.status != 0 {
		t.Fatalf("GET *: status %d, body %q, reset %v (%v)", r.status, r.body, r.rst, r.code)
	}
	c.request(5, true, ":method", "OPTIONS", ":scheme", "http", ":authority", "localhost", ":path", "*")
	if r := c.response(5); r.rst || r.status != 200 || string(r.body) != "OPTIONS * for localhost" {
		t.Fatalf("OPTIONS *: status %d, body %q, reset %v (%v)", r.status, r.body, r.rst, r.code)
	}
	c.request(7, true, ":method", "GET", ":scheme", "http", ":authority", "localhost", ":path", "/x")
	if r := c.response(7); r.status != 200 || string(r.body) != "GET /x for localhost" {
		t.Fatalf("after the refusals: status %d, body %q", r.status, r.body)
	}
}
