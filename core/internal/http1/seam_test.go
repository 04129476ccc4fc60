package http1

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// The API for packages built on core, used as a router and a package of waits outside the
// module would use it.

// TestRouteAndParams: a router's Route and parameters, as the handler and its middleware see
// them; the values Params hands out are copies, the names the router's own.
func TestRouteAndParams(t *testing.T) {
	route, label := serve.NewRoute("/users/:id/files/*path"), serve.NewRoute("(not found)")
	kept := make(chan string, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		path := string(c.Bytes().Path())
		if !strings.HasPrefix(path, "/users/") {
			c.Seam().SetRoute(label)
			fmt.Fprintf(c, "route %q label %q", c.Route(), c.Seam().RouteLabel())
			return
		}
		// As a router does: the values are substrings of the request's path.
		p := c.Bytes().Path()
		id, file, _ := strings.Cut(string(p[len("/users/"):]), "/files")
		c.Seam().SetParams([]serve.Param{{Key: "id", Value: id}, {Key: "path", Value: file}})
		c.Seam().SetRoute(route)
		var b strings.Builder
		for k, v := range c.Params() {
			fmt.Fprintf(&b, " %s=%s", k, v)
			if k == "id" {
				kept <- v
			}
		}
		fmt.Fprintf(c, "route %q label %q param %q params%s", c.Route(), c.Seam().RouteLabel(), c.Param("id"), b.String())
	}, serve.Options{Loops: 1})
	conn := dial(t, addr)
	conn.Send("GET /users/42/files/a/b HTTP/1.1\r\nHost: h\r\n\r\n")
	body, err := readResp(conn)
	want := `route "/users/:id/files/*path" label "/users/:id/files/*path" param "42" params id=42 path=/a/b`
	if err != nil || body != want {
		t.Fatalf("got %q, %v; want %q", body, err, want)
	}
	v := receive(t, "the kept value", kept)
	// The next request reuses the arena the first one's path was in; the kept value is a copy.
	conn.Send("GET /other/99999999 HTTP/1.1\r\nHost: h\r\n\r\n")
	if body, err := readResp(conn); err != nil || body != `route "" label "(not found)"` {
		t.Fatalf("a label: got %q, %v", body, err)
	}
	if v != "42" {
		t.Fatalf("a value Params handed out changed to %q once its request ended", v)
	}
}

// TestCheckCallerAndMayPark: the checks a package of waits makes, in the handler, in a
// continuation and from another goroutine.
func TestCheckCallerAndMayPark(t *testing.T) {
	type seen struct {
		handlerCheck, contCheck, goroutineCheck error
		handlerPark, contPark                   bool
	}
	got := make(chan seen, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		var s seen
		s.handlerCheck, s.handlerPark = c.Seam().CheckCaller("test.Wait"), c.Seam().MayPark()
		done := make(chan error)
		go func() { done <- c.Seam().CheckCaller("test.Wait") }()
		s.goroutineCheck = <-done
		c.Seam().DetachFor(1, func(c *serve.Ctx, err error) {
			s.contCheck, s.contPark = c.Seam().CheckCaller("test.Wait"), c.Seam().MayPark()
			got <- s
			c.WriteString(fmt.Sprint(err))
		})
	}, serve.Options{Logger: newTestLogger(&logBuffer{})})
	conn := dial(t, addr)
	conn.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if body, err := readResp(conn); err != nil || body != "<nil>" {
		t.Fatalf("DetachFor's continuation got %q, %v; want a nil error", body, err)
	}
	s := receive(t, "what the checks said", got)
	if s.handlerCheck != nil || !s.handlerPark {
		t.Errorf("in the handler: CheckCaller %v, MayPark %v", s.handlerCheck, s.handlerPark)
	}
	if s.contCheck != nil || s.contPark {
		t.Errorf("in the continuation: CheckCaller %v, MayPark %v; want nil, false", s.contCheck, s.contPark)
	}
	if !errors.Is(s.goroutineCheck, serve.ErrOutsideRequest) || !strings.Contains(s.goroutineCheck.Error(), "test.Wait") {
		t.Errorf("from another goroutine: CheckCaller %v, want ErrOutsideRequest naming test.Wait", s.goroutineCheck)
	}
}

// TestWakerOnItsLoop: a Waker woken on its handler's loop (a Post callback here, a Protocol's
// callback or a wait list's drain in dwell's packages) wakes the park it was taken for, and
// a Waker woken by the handler itself before it parks is kept for the park.
func TestWakerOnItsLoop(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		w := c.Waker()
		if c.Path() == "/self" {
			w.Wake(errors.New("woken before"))
		} else {
			c.Seam().Loop().Post(func() { w.Wake(errors.New("woken on the loop")) })
		}
		c.WriteString(c.Suspend(0).Error())
	}, serve.Options{})
	for path, want := range map[string]string{"/self": "woken before", "/loop": "woken on the loop"} {
		conn := dial(t, addr)
		conn.Send("GET " + path + " HTTP/1.1\r\nHost: h\r\n\r\n")
		if body, err := readResp(conn); err != nil || body != want {
			t.Errorf("%s: got %q, %v; want %q", path, body, err, want)
		}
	}
}
