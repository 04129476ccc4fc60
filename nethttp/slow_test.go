package nethttp

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// setHTTPWorkers sizes the bridge's pool for the length of the test, and puts the old size back
// at its end (after the test's servers have stopped: cleanups run last registered first).
func setHTTPWorkers(t *testing.T, n int) {
	t.Helper()
	old := defaultPool.w.Size()
	SetWorkers(n)
	t.Cleanup(func() { SetWorkers(old) })
}

// bridgeGET answers the GET of the tests below: another bridged route on the same server.
func bridgeGET(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "bridge ok") }

// getBridge asks for /bridge on a connection of its own and checks the whole answer.
func getBridge(t *testing.T, addr, when string) {
	t.Helper()
	cl := coretest.Dial(t, addr)
	cl.Send("GET /bridge HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, err := http.ReadResponse(cl.R, nil)
	if err != nil {
		t.Fatalf("GET /bridge %s: %v", when, err)
	}
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "bridge ok" || err != nil {
		t.Fatalf("GET /bridge %s: %d %q %v", when, resp.StatusCode, body, err)
	}
}

// TestSlowUploadsDoNotStarve: uploads whose clients send the head and part of the body, then
// nothing, hold no place in the pool while their handlers wait for the rest. With a pool of 4,
// a GET to another bridged route is answered while four such uploads hold, and again while
// eight do (more than the pool's places, all of them started); once the bodies arrive, every
// upload is answered with its whole body. Half the bodies have a Content-Length, half are
// chunked.
func TestSlowUploadsDoNotStarve(t *testing.T) {
	setHTTPWorkers(t, 4)
	reading := make(chan struct{}, 8)
	r := newMux()
	r.HandleHTTP("POST", "/upload", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reading <- struct{}{}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%d %x", len(b), sha256.Sum256(b))
	}))
	r.HandleHTTP("GET", "/bridge", http.HandlerFunc(bridgeGET))
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})

	body := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	const sent = 1000                                      // before the client stops
	var uploads []*coretest.Conn
	chunked := func(i int) bool { return i%2 == 1 }
	startUploads := func(n int) {
		for range n {
			cl := coretest.Dial(t, addr)
			if chunked(len(uploads)) {
				cl.Send(fmt.Sprintf("POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"+
					"%x\r\n%s\r\n", sent, body[:sent]))
			} else {
				cl.Send(fmt.Sprintf("POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%s",
					len(body), body[:sent]))
			}
			uploads = append(uploads, cl)
		}
		for range n {
			coretest.Receive(t, "an upload's handler reading its body", reading)
		}
	}
	startUploads(4)
	getBridge(t, addr, "while 4 uploads wait for their bodies")
	startUploads(4)
	getBridge(t, addr, "while 8 uploads wait for their bodies")

	for i, cl := range uploads {
		if chunked(i) {
			cl.Send(fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body)-sent, body[sent:]))
		} else {
			cl.Send(string(body[sent:]))
		}
	}
	want := fmt.Sprintf("%d %x", len(body), sha256.Sum256(body))
	for i, cl := range uploads {
		if resp, got := cl.Response("POST"); resp.StatusCode != 200 || got != want {
			t.Errorf("upload %d: %d %q, want %q", i, resp.StatusCode, got, want)
		}
	}
	waitPoolIdle(t)
}

// TestSlowReadersDoNotStarve: handlers writing to clients that do not read hold no place in the
// pool while they wait for their clients to take the bytes: with a pool of 4, a GET to another
// bridged route is answered while four such downloads are stuck; then each client reads its
// response whole.
func TestSlowReadersDoNotStarve(t *testing.T) {
	setHTTPWorkers(t, 4)
	const total = 32 << 20 // far more than the socket buffers and WriteHighWater hold
	started := make(chan struct{}, 4)
	r := newMux()
	r.HandleHTTP("GET", "/download", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		w.Header().Set("Content-Length", fmt.Sprint(total))
		piece := make([]byte, 32<<10)
		for n := 0; n < total; n += len(piece) {
			if _, err := w.Write(piece); err != nil {
				return
			}
		}
	}))
	r.HandleHTTP("GET", "/bridge", http.HandlerFunc(bridgeGET))
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})

	var downloads []*coretest.Conn
	for range 4 {
		cl := coretest.Dial(t, addr)
		cl.SetReadBuffer(64 << 10)
		cl.Send("GET /download HTTP/1.1\r\nHost: h\r\n\r\n")
		downloads = append(downloads, cl)
	}
	for range 4 {
		coretest.Receive(t, "a download's handler starting", started)
	}
	getBridge(t, addr, "while 4 downloads wait for their clients")

	for i, cl := range downloads {
		resp, err := http.ReadResponse(cl.R, nil)
		if err != nil {
			t.Fatalf("download %d: %v", i, err)
		}
		if n, err := io.Copy(io.Discard, resp.Body); n != total || err != nil {
			t.Errorf("download %d: %d bytes (%v), want %d", i, n, err, total)
		}
	}
	waitPoolIdle(t)
}

// TestResumingGoesFirst: a handler whose body has come while the pool was full takes the next
// free place before an exchange that has not started. With one place: an upload waits for its
// body (holding no place), a GET takes the place and holds it, a second GET queues; then the
// upload's body arrives, and once the first GET returns, the upload finishes before the second
// GET starts.
func TestResumingGoesFirst(t *testing.T) {
	setHTTPWorkers(t, 1)
	var mu sync.Mutex
	var order []string
	record := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, s)
	}
	reading, holding := make(chan struct{}, 1), make(chan struct{}, 1)
	gate := make(chan struct{})
	open := sync.OnceFunc(func() { close(gate) })
	r := newMux()
	r.HandleHTTP("POST", "/upload", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reading <- struct{}{}
		b, _ := io.ReadAll(r.Body)
		record("upload " + string(b))
	}))
	r.HandleHTTP("GET", "/hold", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		holding <- struct{}{}
		<-gate
		record("hold")
	}))
	r.HandleHTTP("GET", "/next", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record("next")
	}))
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})
	t.Cleanup(open) // before the server stops, if the test fails first

	upload := coretest.Dial(t, addr)
	upload.Send("POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 8\r\n\r\nhalf")
	coretest.Receive(t, "the upload's handler reading", reading)
	coretest.WaitFor(t, "the upload waiting for its body without a place", func() bool {
		return poolState().waiting == 1
	})
	hold := coretest.Dial(t, addr)
	hold.Send("GET /hold HTTP/1.1\r\nHost: h\r\n\r\n")
	coretest.Receive(t, "the first GET holding the place", holding)
	next := coretest.Dial(t, addr)
	next.Send("GET /next HTTP/1.1\r\nHost: h\r\n\r\n")
	coretest.WaitFor(t, "the second GET queued", func() bool { return poolState().queued == 1 })
	upload.Send("full")
	coretest.WaitFor(t, "the upload's body in, waiting for a place", func() bool {
		return poolState().resuming == 1
	})
	open()
	for _, c := range []struct {
		cl     *coretest.Conn
		method string
	}{{upload, "POST"}, {hold, "GET"}, {next, "GET"}} {
		if resp, _ := c.cl.Response(c.method); resp.StatusCode != 200 {
			t.Errorf("%s: status %d", c.method, resp.StatusCode)
		}
	}
	mu.Lock()
	got := strings.Join(order, ", ")
	mu.Unlock()
	if want := "hold, upload halffull, next"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	waitPoolIdle(t)
}

// TestWorkerBoundUploads: handlers whose bodies came with their heads never wait for their
// clients, so they keep their places: no more of them run at once than the pool allows, and
// the rest queue, as requests without bodies do (TestWorkerBound).
func TestWorkerBoundUploads(t *testing.T) {
	setHTTPWorkers(t, 2)
	const n = 6
	started := make(chan struct{}, n)
	gate := make(chan struct{})
	open := sync.OnceFunc(func() { close(gate) })
	var running, most int
	var mu sync.Mutex
	r := newMux()
	r.HandleHTTP("POST", "/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		started <- struct{}{}
		<-gate
		mu.Lock()
		running--
		mu.Unlock()
		fmt.Fprintf(w, "%s %v", b, err)
	}))
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})
	t.Cleanup(open)
	conns := make([]*coretest.Conn, n)
	for i := range conns {
		conns[i] = coretest.Dial(t, addr)
		conns[i].Send("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello")
	}
	coretest.Receive(t, "a handler running", started)
	coretest.Receive(t, "a second handler running", started)
	coretest.WaitFor(t, "the other requests queued", func() bool { return poolState().queued == n-2 })
	open()
	for i, cl := range conns {
		if _, body := cl.Response("POST"); body != "hello <nil>" {
			t.Errorf("request %d: %q", i, body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 2 {
		t.Errorf("%d handlers ran at once, want 2", most)
	}
	waitPoolIdle(t)
}

// TestLowerBoundEndsIdleWorkers: lowering the bound ends the idle workers over it, so that no
// more handlers run at once than the new bound, however many workers the pool kept from before.
func TestLowerBoundEndsIdleWorkers(t *testing.T) {
	setHTTPWorkers(t, 6)
	started := make(chan struct{}, 6)
	gates := map[string]chan struct{}{"/before": make(chan struct{}), "/after": make(chan struct{})}
	opens := map[string]func(){}
	for path, g := range gates {
		opens[path] = sync.OnceFunc(func() { close(g) })
	}
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-gates[r.URL.Path]
	}, core.Options{})
	t.Cleanup(opens["/before"])
	t.Cleanup(opens["/after"])
	round := func(path string, n, running int) {
		conns := make([]*coretest.Conn, n)
		for i := range conns {
			conns[i] = coretest.Dial(t, addr)
			conns[i].Send("GET " + path + " HTTP/1.1\r\nHost: h\r\n\r\n")
		}
		for range running {
			coretest.Receive(t, "a handler running", started)
		}
		coretest.WaitFor(t, "the rest queued", func() bool { return poolState().queued == n-running })
		opens[path]()
		for _, cl := range conns {
			cl.Response("GET")
		}
	}
	round("/before", 6, 6)
	coretest.WaitFor(t, "six workers idle", func() bool { return poolState().idle >= 6 })
	SetWorkers(2)
	if s := poolState(); s.idle > 2 {
		t.Fatalf("%d workers idle under a bound of 2", s.idle)
	}
	round("/after", 4, 2)
	waitPoolIdle(t)
}

// A poolSnapshot is the bridge pool's accounting at one moment.
type poolSnapshot struct {
	size, busy, idle, waiting, resuming, queued int
}

func poolState() poolSnapshot {
	s := defaultPool.w.State()
	return poolSnapshot{s.Size, s.Busy, s.Idle, s.Waiting, s.Resuming, s.Queued}
}

// waitPoolIdle waits until every exchange has let go of the pool: none busy, waiting, or
// queued, and no more workers than places.
func waitPoolIdle(t *testing.T) {
	t.Helper()
	coretest.WaitFor(t, "the bridge's pool idle", func() bool {
		s := poolState()
		return s.busy == 0 && s.waiting == 0 && s.resuming == 0 && s.queued == 0 && s.idle <= s.size
	})
}
