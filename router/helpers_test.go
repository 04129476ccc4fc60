package router

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// serve runs r on a loopback port for the duration of the test and returns its address.
func serve(t testing.TB, r *Router) string {
	t.Helper()
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})
	return addr
}

// A client sends raw requests over one kept-alive connection, so that tests can send targets
// (such as "*" or "//x/") that net/http's client would rewrite, and see redirects unfollowed.
type client struct{ *coretest.Conn }

func dial(t testing.TB, addr string) *client {
	t.Helper()
	return &client{coretest.Dial(t, addr)}
}

// do sends method and target with the extra header lines given ("Name: value") and returns
// the response with its body read.
func (cl *client) do(method, target string, header ...string) (*http.Response, string) {
	cl.T.Helper()
	req := method + " " + target + " HTTP/1.1\r\nHost: test\r\n"
	for _, h := range header {
		req += h + "\r\n"
	}
	cl.Send(req + "\r\n")
	return cl.Response(method)
}

// reply returns a handler that writes its name and the route's parameters, as
// "name k=v k=v".
func reply(name string) core.Handler {
	return func(c *core.Ctx) {
		var b strings.Builder
		b.WriteString(name)
		for k, v := range c.Params() {
			b.WriteString(" " + k + "=" + v)
		}
		c.WriteString(b.String())
	}
}

// catchPanic returns the message of the panic f raises, or "" when it returns normally.
func catchPanic(f func()) (msg string) {
	defer func() {
		if v := recover(); v != nil {
			msg = panicText(v)
		}
	}()
	f()
	return ""
}

// dispatch runs the route that matches method and path, with its parameters set on c, and
// reports false when there is none: the router's serving path (Router.Handler), minus the
// Ctx's method and path, for the table tests and benchmarks.
func (r *Router) dispatch(c *core.Ctx, method, path string) bool {
	h, th := r.lookup(c, method, path)
	switch {
	case th != nil:
		th((*ctxCarrier)(c), nil, nil)
	case h != nil:
		h(c)
	default:
		return false
	}
	return true
}

// stdHello is the plain net/http handler of the bridge's benchmarks and allocation tests.
var stdHello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, "Hello World")
})
