package nethttp

import (
	"net/http"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestPoolOfItsOwn: handlers that hold their place (streams) run in a Pool of their own, and
// take none of the default pool's: with the default pool at one place and two streams holding
// both places of theirs, another bridged route is answered; a third stream waits its turn
// until one of the two ends, then runs.
func TestPoolOfItsOwn(t *testing.T) {
	setHTTPWorkers(t, 1)
	streams := NewPool(2)
	running := make(chan string, 3)
	end := make(chan struct{}, 3)
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		running <- r.URL.Query().Get("n")
		<-end
		w.Write([]byte("stream " + r.URL.Query().Get("n") + " ended"))
	})
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		if c.Path() == "/stream" {
			streams.Handler(stream)(c)
			return
		}
		Handler(http.HandlerFunc(bridgeGET))(c)
	}, core.Options{})

	conns := make([]*coretest.Conn, 3)
	for i := range conns {
		conns[i] = coretest.Dial(t, addr)
	}
	conns[0].Send("GET /stream?n=0 HTTP/1.1\r\nHost: h\r\n\r\n")
	conns[1].Send("GET /stream?n=1 HTTP/1.1\r\nHost: h\r\n\r\n")
	got := map[string]bool{<-running: true, <-running: true}
	if !got["0"] || !got["1"] {
		t.Fatalf("running: %v", got)
	}
	getBridge(t, addr, "while two streams hold their pool's places")

	conns[2].Send("GET /stream?n=2 HTTP/1.1\r\nHost: h\r\n\r\n")
	getBridge(t, addr, "while a third stream waits for a place")
	select {
	case n := <-running:
		t.Fatalf("stream %s runs beyond its pool's two places", n)
	default:
	}
	end <- struct{}{}
	if n := <-running; n != "2" {
		t.Fatalf("stream %s ran, want the third", n)
	}
	end <- struct{}{}
	end <- struct{}{}
	for i, c := range conns {
		if _, body := c.Response("GET"); body != "stream "+string(rune('0'+i))+" ended" {
			t.Fatalf("stream %d: %q", i, body)
		}
	}
}
