package core

import (
	"context"
	"testing"
)

type otherKey struct{}

// TestSetValuesFrom checks that a context's values become the request's, shadowed by later
// SetValue calls, and that a context derived from the request's own is refused.
func TestSetValuesFrom(t *testing.T) {
	got := make(chan []any, 1)
	_, addr := startServer(t, func(c *Ctx) {
		c.SetValue(otherKey{}, "first")
		c.SetValuesFrom(context.WithValue(context.Background(), otherKey{}, "from the context"))
		fromCtx := c.Context().Value(otherKey{})
		direct := c.Value(otherKey{})
		c.SetValue(otherKey{}, "last")
		last := c.Context().Value(otherKey{})
		var refused any
		func() {
			defer func() { refused = recover() }()
			c.SetValuesFrom(context.WithValue(c.Context(), otherKey{}, "loop"))
		}()
		got <- []any{fromCtx, direct, last, refused != nil}
	}, Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	v := receive(t, "the values", got)
	if v[0] != "from the context" || v[1] != "from the context" || v[2] != "last" || v[3] != true {
		t.Errorf("values %v", v)
	}
}
