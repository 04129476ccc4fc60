package http1

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

type otherKey struct{}

// TestSetValuesFrom checks that a context's values become the request's, shadowed by later
// SetValue calls, and that a context derived from the request's own is refused.
func TestSetValuesFrom(t *testing.T) {
	got := make(chan []any, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.SetValue(otherKey{}, "first")
		c.Seam().SetValuesFrom(context.WithValue(context.Background(), otherKey{}, "from the context"))
		fromCtx := c.Context().Value(otherKey{})
		direct := c.Value(otherKey{})
		c.SetValue(otherKey{}, "last")
		last := c.Context().Value(otherKey{})
		var refused any
		func() {
			defer func() { refused = recover() }()
			c.Seam().SetValuesFrom(context.WithValue(c.Context(), otherKey{}, "loop"))
		}()
		got <- []any{fromCtx, direct, last, refused != nil}
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	v := receive(t, "the values", got)
	if v[0] != "from the context" || v[1] != "from the context" || v[2] != "last" || v[3] != true {
		t.Errorf("values %v", v)
	}
}

// valueKey is the key type of the values tests.
type valueKey int

// valueSteps attach values past the inline ones (the first four), shadowing across them: an
// inline value by a later inline one (1), an inline value by a SetValuesFrom node (1), an
// inline SetValuesFrom by a node (2), a node by a node (0, 1). Key 5 is set inline only.
var valueSteps = []struct {
	key  valueKey
	val  string
	from bool // SetValuesFrom a context holding key → val, rather than SetValue
}{
	{5, "a5", false},
	{1, "a1", false},
	{2, "f2", true},
	{1, "b1", false}, // the last inline value
	{0, "b0", false},
	{1, "f1", true},
	{2, "b2", false},
	{3, "a3", false},
	{1, "c1", false},
	{0, "c0", false},
}

// valueKeys are those the tests ask for, 4 never set.
var valueKeys = []valueKey{0, 1, 2, 3, 4, 5}

// checkValues reports where the values c and ctx (when not nil) answer disagree with those the
// first n valueSteps set: the newest step for a key, whichever its kind.
func checkValues(c *serve.Ctx, ctx context.Context, n int) error {
	for _, k := range valueKeys {
		var want any
		for _, s := range valueSteps[:n] {
			if s.key == k {
				want = s.val
			}
		}
		if got := c.Value(k); got != want {
			return fmt.Errorf("after %d steps, Value(%d) is %v, want %v", n, k, got, want)
		}
		if ctx == nil {
			continue
		}
		if got := ctx.Value(k); got != want {
			return fmt.Errorf("after %d steps, Context().Value(%d) is %v, want %v", n, k, got, want)
		}
	}
	return nil
}

// TestValuesInlineAndContext: the values of a request, inline and past the inline ones, shadow
// newest first through Value and through a Context made before, between or after the
// SetValue calls. The Context, kept past the request, answers its own request's values while
// the next request on the connection — the same Ctx, the same inline slots — sets others under
// the same keys; that request sees none of the first's.
func TestValuesInlineAndContext(t *testing.T) {
	type first struct {
		cx  *serve.Ctx
		ctx context.Context
	}
	firsts := make(chan first, 1)
	seconds := make(chan *serve.Ctx, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		if c.Path() == "/second" {
			for _, k := range valueKeys {
				if v := c.Value(k); v != nil {
					c.WriteString(fmt.Sprintf("the next request sees Value(%d) = %v", k, v))
					return
				}
			}
			for i, k := range []valueKey{5, 0, 1, 2, 3, 0, 1} {
				c.SetValue(k, fmt.Sprint("z", i))
			}
			if c.Value(valueKey(5)) != "z0" || c.Value(valueKey(0)) != "z5" || c.Value(valueKey(1)) != "z6" ||
				c.Value(valueKey(2)) != "z3" || c.Value(valueKey(3)) != "z4" {
				c.WriteString("the next request's own values are wrong")
				return
			}
			seconds <- c
			c.WriteString("ok")
			return
		}
		at, _ := strconv.Atoi(c.Path()[1:]) // the Context is made before step at, -1 for never
		var ctx context.Context
		for i := 0; i <= len(valueSteps); i++ {
			if i == at {
				ctx = c.Context()
			}
			if err := checkValues(c, ctx, i); err != nil {
				c.WriteString(err.Error())
				return
			}
			if i == len(valueSteps) {
				break
			}
			if s := valueSteps[i]; s.from {
				c.Seam().SetValuesFrom(context.WithValue(context.Background(), s.key, s.val))
			} else {
				c.SetValue(s.key, s.val)
			}
		}
		firsts <- first{c, ctx}
		c.WriteString("ok")
	}, serve.Options{})
	for at := -1; at <= len(valueSteps); at++ {
		t.Run(fmt.Sprint("context at ", at), func(t *testing.T) {
			conn := dial(t, addr)
			conn.Send(fmt.Sprintf("GET /%d HTTP/1.1\r\nHost: h\r\n\r\n", at))
			if _, body := conn.Response("GET"); body != "ok" {
				t.Fatal(body)
			}
			f := receive(t, "the first request", firsts)
			// Another goroutine asks the kept Context while the next request sets its values,
			// so that the race detector sees it if the two share memory.
			stop := make(chan struct{})
			errc := askUntil(f.ctx, stop)
			conn.Send("GET /second HTTP/1.1\r\nHost: h\r\n\r\n")
			_, body := conn.Response("GET")
			close(stop)
			if body != "ok" {
				t.Fatal(body)
			}
			if cx := receive(t, "the second request", seconds); cx != f.cx {
				t.Fatal("the second request had another Ctx: this test no longer tests a Ctx's reuse")
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if f.ctx == nil {
				return
			}
			if err := f.ctx.Err(); err != context.Canceled {
				t.Errorf("the kept Context's Err is %v", err)
			}
			for _, k := range valueKeys {
				if err := checkContext(f.ctx, k); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// checkContext reports whether a Context kept from a request that took every valueStep
// disagrees with them on key k.
func checkContext(ctx context.Context, k valueKey) error {
	var want any
	for _, s := range valueSteps {
		if s.key == k {
			want = s.val
		}
	}
	if got := ctx.Value(k); got != want {
		return fmt.Errorf("the kept Context's Value(%d) is %v, want %v", k, got, want)
	}
	return nil
}

// askUntil asks ctx (when not nil) for every valueKey again and again until stop is closed, then
// sends nil, or sends the first disagreement with the valueSteps it finds.
func askUntil(ctx context.Context, stop <-chan struct{}) <-chan error {
	errc := make(chan error, 1)
	if ctx == nil {
		errc <- nil
		return errc
	}
	go func() {
		for {
			select {
			case <-stop:
				errc <- nil
				return
			default:
			}
			for _, k := range valueKeys {
				if err := checkContext(ctx, k); err != nil {
					errc <- err
					return
				}
			}
		}
	}()
	return errc
}
