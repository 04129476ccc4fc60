package servetest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// Start serves h with first as the server's First and mux, unless nil, as its Multiplexer, on a
// free loopback port (o.Addr is ignored), logging nowhere unless o.Logger says where; it
// returns the server and its address. The server is shut down when the test ends, and the test
// fails if ListenAndServe returned anything but ErrServerClosed.
func Start(t testing.TB, h serve.Handler, o serve.Options, first serve.First, mux serve.Multiplexer) (*serve.Server, string) {
	t.Helper()
	o.Addr = "127.0.0.1:0"
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := serve.NewServer(h, o)
	s.SetFirst(first)
	if mux != nil {
		s.SetMultiplexer(mux)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.ListenAndServe() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		if err := <-errc; err != serve.ErrServerClosed {
			t.Errorf("ListenAndServe returned %v", err)
		}
	})
	return s, s.Addr().String()
}
