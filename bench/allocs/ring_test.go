package allocs

import (
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/testclient"
)

// The -uring sub-benchmarks serve with core.Options.Poller "io_uring", as the driver's
// dwell-uring servers do through DWELL_POLLER. Where io_uring cannot be used the server
// logs why and polls with epoll; the sub-benchmark is then skipped with that line, so that
// no figure says io_uring of what epoll did.

// ringOptions are a server's options with its loops on io_uring and its warnings written to log.
func ringOptions(log *testclient.LogBuffer) core.Options {
	return core.Options{Poller: "io_uring", Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn}))}
}

// onRing starts a server with start, given options on io_uring, and returns its address; it
// skips b when the server, once it has answered a request, had logged that it polls with
// epoll instead.
func onRing(b *testing.B, start func(b *testing.B, o core.Options) string) string {
	var log testclient.LogBuffer
	addr := start(b, ringOptions(&log))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	firstResponse(b, c)
	if line := log.String(); strings.Contains(line, "io_uring") {
		b.Skip(strings.TrimSpace(line))
	}
	return addr
}
