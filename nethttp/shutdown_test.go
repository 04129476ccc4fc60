package nethttp

import (
	"context"
	"net/http"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestShutdownReachesBridgedHandler: a net/http handler that would wait for the grace period's
// end (a stream following a feed) learns from core.Server.RegisterOnShutdown that a shutdown
// has begun, ends its response, and the shutdown completes with no deadline to end it; a call
// under way that does not listen finishes as it would have. A function registered once the
// shutdown has begun runs at once.
func TestShutdownReachesBridgedHandler(t *testing.T) {
	stopping := make(chan struct{})
	started := make(chan struct{}, 2)
	finish := make(chan struct{})
	srv, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/follow":
			w.Write([]byte("following\n"))
			w.(http.Flusher).Flush()
			started <- struct{}{}
			select {
			case <-stopping:
				w.Write([]byte("server stopping\n"))
			case <-r.Context().Done():
				w.Write([]byte("context ended\n"))
			}
		case "/slow":
			started <- struct{}{}
			<-finish
			w.Write([]byte("done\n"))
		}
	}, core.Options{})
	srv.RegisterOnShutdown(func() { close(stopping) })

	follow, slow := coretest.Dial(t, addr), coretest.Dial(t, addr)
	follow.Send("GET /follow HTTP/1.1\r\nHost: h\r\n\r\n")
	slow.Send("GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
	<-started
	<-started
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()

	if _, body := follow.Response("GET"); body != "following\nserver stopping\n" {
		t.Fatalf("the follow's body: %q", body)
	}
	late := make(chan struct{})
	srv.RegisterOnShutdown(func() { close(late) })
	<-late
	close(finish)
	if _, body := slow.Response("GET"); body != "done\n" {
		t.Fatalf("the slow call's body: %q", body)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	follow.ExpectEOF()
}
