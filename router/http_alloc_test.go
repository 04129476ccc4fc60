//go:build !race && linux && !dwell_portable

package router

import (
	"io"
	"net/http"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestBridgeAllocations counts a whole request through the bridge, server and handler together,
// for the hello of bench/ and for a route with a parameter and a few header fields.
//
// The hello's budget: on the loop, the target, the Host field's name and value (Ctx.Headers
// copies them), RemoteAddr and the request's context; on the goroutine, the *http.Request, its
// URL and header map, the handler's writer and body, and the handler's own header map and
// Content-Type value. net/http's server makes 17 for the same handler (see
// BenchmarkStdHelloNetHTTP). The second case adds two header fields (two each: the name and
// value Ctx.Headers copies) and their values' backing array, a route parameter (its copy, and
// net/http's path values), and spares the handler's header map.
func TestBridgeAllocations(t *testing.T) {
	r := New()
	r.HandleHTTP("GET", "/std/hello", stdHello)
	r.HandleHTTP("GET", "/users/:id", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.PathValue("id"))
	}))
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})
	for _, tc := range []struct {
		name, req string
		want      float64
	}{
		{"hello", "GET /std/hello HTTP/1.1\r\nHost: localhost\r\n\r\n", 12},
		{"param and fields", "GET /users/42 HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\nUser-Agent: t\r\n\r\n", 18},
	} {
		rt := coretest.NewRoundTripper(t, addr, tc.req)
		for range 100 {
			rt.Do(t)
		}
		n := testing.AllocsPerRun(2000, func() { rt.Do(t) })
		if n != tc.want {
			t.Errorf("%s: %v allocations per request, want %v", tc.name, n, tc.want)
		}
	}
}
