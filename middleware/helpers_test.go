package middleware_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// chain wraps h in mw, the first outermost, as router.Use does.
func chain(h core.Handler, mw ...func(core.Handler) core.Handler) core.Handler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// lines is an io.Writer for a slog handler that hands over each record, one Write per record
// as slog's handlers make, on a channel: the test waits for a line rather than sleeping.
type lines chan []byte

func (l lines) Write(p []byte) (int, error) {
	l <- bytes.Clone(p)
	return len(p), nil
}

// next returns the next line, failing the test if none comes within 10 s.
func (l lines) next(t testing.TB) []byte {
	t.Helper()
	select {
	case b := <-l:
		return b
	case <-time.After(coretest.Patience):
		t.Fatal("no log line")
		return nil
	}
}

// nextJSON returns the next line decoded.
func (l lines) nextJSON(t testing.TB) map[string]any {
	t.Helper()
	b := l.next(t)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("log line %q: %v", b, err)
	}
	return m
}

// jsonLogger logs JSON lines to a new lines channel.
func jsonLogger() (*slog.Logger, lines) {
	l := make(lines, 16)
	return slog.New(slog.NewJSONHandler(l, nil)), l
}

// dialRaw connects to addr with a client that speaks bytes.
func dialRaw(t testing.TB, addr string) *coretest.Conn {
	t.Helper()
	return coretest.Dial(t, addr)
}

// readResponse reads a response head from c, leaving its body to be read.
func readResponse(c *coretest.Conn) (*http.Response, error) {
	c.SetReadDeadline(time.Now().Add(coretest.Patience))
	return http.ReadResponse(c.R, nil)
}
