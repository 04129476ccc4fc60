package allocs

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/dwellhttp/dwell/core"
)

// The -uring sub-benchmarks serve with core.Options.Poller "io_uring", as the driver's
// dwell-uring servers do through DWELL_POLLER. Where io_uring cannot be used the server
// logs why and polls with epoll; the sub-benchmark is then skipped with that line, so that
// no figure says io_uring of what epoll did.

// ringLog holds what a server on io_uring logged at warning level or above.
type ringLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *ringLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// options are o with its loops on io_uring and its warnings kept by l.
func (l *ringLog) options(o core.Options) core.Options {
	o.Poller = "io_uring"
	o.Logger = slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return o
}

// onRing starts a server with start, given options on io_uring, and returns its address; it
// skips b when the server, once it has answered a request, had logged that it polls with
// epoll instead.
func onRing(b *testing.B, start func(b *testing.B, o core.Options) string) string {
	var l ringLog
	addr := start(b, l.options(core.Options{}))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	firstResponse(b, c)
	l.mu.Lock()
	defer l.mu.Unlock()
	if line := l.buf.String(); strings.Contains(line, "io_uring") {
		b.Skip(strings.TrimSpace(line))
	}
	return addr
}
