package nethttp

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// serveStd serves the net/http handler h, through Handler, on a loopback port for the
// length of the test, and returns the server and its address.
func serveStd(t testing.TB, h http.HandlerFunc, o core.Options) (*core.Server, string) {
	t.Helper()
	return coretest.Serve(t, Handler(h), o)
}

// captureLogs makes a logger writing to a buffer; with setDefault it also becomes slog's
// default (for the bridge's own warnings) until the test ends.
func captureLogs(t *testing.T, setDefault bool) (*slog.Logger, *coretest.LogBuffer) {
	buf := &coretest.LogBuffer{}
	lg := slog.New(slog.NewTextHandler(buf, nil))
	if setDefault {
		old := slog.Default()
		slog.SetDefault(lg)
		t.Cleanup(func() { slog.SetDefault(old) })
	}
	return lg, buf
}

// A testMux routes by method and path alone to net/http handlers served through Handler: the
// part of the router these tests need, which this package cannot import (the router imports
// it). A path no handler has gets a 404.
type testMux map[string]core.Handler

func newMux() testMux { return testMux{} }

// HandleHTTP serves method and path with h.
func (m testMux) HandleHTTP(method, path string, h http.Handler) { m[method+" "+path] = Handler(h) }

// Handler returns the mux as a dwell handler.
func (m testMux) Handler() core.Handler {
	return func(c *core.Ctx) {
		if h := m[c.Method()+" "+c.Path()]; h != nil {
			h(c)
			return
		}
		c.SetStatus(404)
	}
}
