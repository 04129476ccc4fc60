package http1

import (
	"crypto/tls"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/core/internal/servetest"
)

// waitStats waits until the server's summed statistics satisfy cond, and returns them.
func waitStats(t *testing.T, s *serve.Server, what string, cond func(serve.LoopStats) bool) serve.LoopStats {
	t.Helper()
	var last serve.LoopStats
	waitFor(t, what, func() bool {
		last = s.Stats().Total
		return cond(last)
	})
	return last
}

// TestStatsConnStates drives connections into each state and checks that the gauges count them.
func TestStatsConnStates(t *testing.T) {
	wakers := make(chan serve.Waker, 4)
	p := servetest.NewEcho("")
	big := unsentSize(t)
	s, addr := startServer(t, func(c *serve.Ctx) {
		switch c.Path() {
		case "/park":
			wakers <- c.Waker()
			c.Suspend(0)
			c.WriteString("woken")
		case "/work":
			wakers <- c.Waker()
			c.Seam().SetWorking(true)
			c.Seam().Hold()
			c.Seam().SetWorking(false)
			c.WriteString("worked")
		case "/detach":
			wakers <- c.Waker()
			c.Detach(0, func(c *serve.Ctx, err error) { c.WriteString("woken") })
		case "/hand":
			c.SetStatus(101)
			c.SetHeader("Upgrade", "echo")
			c.SetHeader("Connection", "Upgrade")
			if _, err := c.HandOver(p); err != nil {
				t.Error(err)
			}
		case "/big":
			c.Write(make([]byte, big))
		default:
			c.WriteString("hi")
		}
	}, serve.Options{Loops: 2, WriteHighWater: big + 1})

	idle := dial(t, addr)
	idle.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	idle.Response("GET")
	want := serve.ConnStates{Open: 1, Idle: 1}
	waitStats(t, s, "one idle", func(ls serve.LoopStats) bool { return ls.Conns == want })

	reading := dial(t, addr)
	reading.Send("GET / HTTP/1.1\r\nHo")
	want.Open, want.Reading = 2, 1
	waitStats(t, s, "one reading", func(ls serve.LoopStats) bool { return ls.Conns == want })

	parked := dial(t, addr)
	parked.Send("GET /park HTTP/1.1\r\nHost: h\r\n\r\n")
	wakePark := receive(t, "park", wakers)
	want.Open, want.Parked = 3, 1
	waitStats(t, s, "one parked", func(ls serve.LoopStats) bool { return ls.Conns == want })

	working := dial(t, addr)
	working.Send("GET /work HTTP/1.1\r\nHost: h\r\n\r\n")
	wakeWork := receive(t, "work", wakers)
	want.Open, want.Working = 4, 1
	waitStats(t, s, "one working", func(ls serve.LoopStats) bool { return ls.Conns == want })

	detached := dial(t, addr)
	detached.Send("GET /detach HTTP/1.1\r\nHost: h\r\n\r\n")
	wakeDetach := receive(t, "detach", wakers)
	want.Open, want.Detached = 5, 1
	waitStats(t, s, "one detached", func(ls serve.LoopStats) bool { return ls.Conns == want })

	handed := dial(t, addr)
	handed.Send("GET /hand HTTP/1.1\r\nHost: h\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\n")
	if resp, _ := handed.Response("GET"); resp.StatusCode != 101 {
		t.Fatalf("hand-over status %d", resp.StatusCode)
	}
	want.Open, want.HandedOver = 6, 1
	waitStats(t, s, "one handed over", func(ls serve.LoopStats) bool { return ls.Conns == want })

	writing := dial(t, addr)
	if err := writing.SetReadBuffer(64 << 10); err != nil {
		t.Fatal(err)
	}
	writing.Send("GET /big HTTP/1.1\r\nHost: h\r\n\r\n")
	want.Open, want.Writing = 7, 1
	waitStats(t, s, "one writing", func(ls serve.LoopStats) bool { return ls.Conns == want })

	// Out of each state again.
	wakePark.Wake(nil)
	if _, body := parked.Response("GET"); body != "woken" {
		t.Fatalf("parked handler answered %q", body)
	}
	wakeWork.Wake(nil)
	if _, body := working.Response("GET"); body != "worked" {
		t.Fatalf("working handler answered %q", body)
	}
	wakeDetach.Wake(nil)
	if _, body := detached.Response("GET"); body != "woken" {
		t.Fatalf("continuation answered %q", body)
	}
	if _, body := writing.Response("GET"); len(body) != big {
		t.Fatalf("big body of %d bytes", len(body))
	}
	handed.Send("bye")
	receive(t, "protocol closed", p.Done)
	reading.Send("st: h\r\n\r\n")
	reading.Response("GET")
	want = serve.ConnStates{Open: 6, Idle: 6}
	ls := waitStats(t, s, "all idle", func(ls serve.LoopStats) bool { return ls.Conns == want })
	if ls.Accepted != 7 || ls.Requests != 7 {
		t.Errorf("accepted %d, requests %d; want 7 and 7", ls.Accepted, ls.Requests)
	}
	if ls.BytesOut < int64(big) || ls.BytesIn == 0 || ls.Turns == 0 {
		t.Errorf("bytes in %d, out %d, turns %d", ls.BytesIn, ls.BytesOut, ls.Turns)
	}
	st := s.Stats()
	if len(st.Loops) != 2 || st.Loops[0].Loop != 0 || st.Loops[1].Loop != 1 || st.Total.Loop != -1 {
		t.Fatalf("loops %+v", st.Loops)
	}
	if n := st.Loops[0].Conns.Open + st.Loops[1].Conns.Open; n != 6 || st.Loops[0].Stale || st.Total.Stale {
		t.Errorf("the loops' open connections add up to %d, stale %v", n, st.Total.Stale)
	}
}

// unsentSize returns a response size that the sockets cannot take while the client does not
// read, its receive buffer set to 64 KiB: more than the largest send buffer the kernel grows a
// socket's to, plus that receive buffer (doubled, as Linux does) and a margin.
func unsentSize(t *testing.T) int {
	size := 16 << 20 // elsewhere: more than the usual maxima
	if b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_wmem"); err == nil {
		f := strings.Fields(string(b))
		if n, err := strconv.Atoi(f[len(f)-1]); err == nil {
			size = n + 2*(64<<10) + 1<<20
		}
	}
	return size
}

// TestStatsRefusals checks that the server's own answers are counted by status.
func TestStatsRefusals(t *testing.T) {
	s, addr := startServer(t, func(c *serve.Ctx) {
		switch c.Path() {
		case "/read":
			b := make([]byte, 64)
			for {
				if _, err := c.ReadBody(b); err != nil {
					break
				}
			}
		case "/late":
			c.SetTimeout(time.Millisecond)
			c.Suspend(0)
		case "/panic":
			panic("on purpose")
		}
	}, serve.Options{MaxHeaderBytes: 4 << 10, MaxBodyBytes: 10, HeaderTimeout: 50 * time.Millisecond})
	long := strings.Repeat("a", 5<<10)
	for _, raw := range []string{
		"GET / HTTP/1.1\r\n\r\n", // no Host
		"GET /" + long + " HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h\r\nX: " + long + "\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: br, chunked\r\n\r\n0\r\n\r\n",
		"GET / HTTP/2.0\r\nHost: h\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: h\r\nExpect: nothing\r\n\r\n",
		"POST /read HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n01234567890",
		"POST /read HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"GET /late HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /panic HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET / HTTP/1.1\r\n", // never finished: 408
	} {
		c := dial(t, addr)
		c.Send(raw)
		c.Response("GET")
		c.ExpectEOF()
	}
	want := serve.Refusals{BadRequest: 2, RequestTimeout: 1, ContentTooLarge: 1, URITooLong: 1,
		ExpectationFailed: 1, HeaderFieldsTooLarge: 1, NotImplemented: 1, Unavailable: 1, VersionNotSupported: 1}
	ls := waitStats(t, s, "the refusals counted", func(ls serve.LoopStats) bool { return ls.Refused == want && ls.Panics == 1 })
	if ls.Refused.Total() != 10 {
		t.Errorf("total %d", ls.Refused.Total())
	}
	if ls.Requests != 4 {
		t.Errorf("%d requests reached a handler; want 4", ls.Requests)
	}
}

// TestStatsTLS checks the TLS gauges and the handshakes counted.
func TestStatsTLS(t *testing.T) {
	p := newPKI(t)
	s, addr := startTLS(t, p, helloHandler, serve.Options{Loops: 1})
	tc, r := tlsDial(t, addr, p.clientConfig(tls.VersionTLS13))
	fmt.Fprint(tc, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, err := readResp(&rawConn{R: r}); err != nil {
		t.Fatal(err)
	}
	hs := dial(t, addr)
	hs.Send("\x16\x03\x01") // the start of a record: the handshake has begun
	plain := dial(t, addr)
	plain.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	plain.Response("GET")
	want := serve.ConnStates{Open: 2, Idle: 2, TLS: 2, TLSHandshaking: 1}
	ls := waitStats(t, s, "TLS connections", func(ls serve.LoopStats) bool { return ls.Conns == want })
	if ls.TLSHandshakes != 1 || ls.TLSHandshakeFailures != 1 || ls.Refused.BadRequest != 1 {
		t.Errorf("handshakes %d, failed %d, 400s %d", ls.TLSHandshakes, ls.TLSHandshakeFailures, ls.Refused.BadRequest)
	}
	hs.Close()
	waitStats(t, s, "the abandoned handshake", func(ls serve.LoopStats) bool {
		return ls.TLSHandshakesAbandoned == 1 && ls.Conns.Open == 1 && ls.TLSHandshakeFailures == 1
	})
}

// TestStatsStoppedAndStalled checks Stats on a stalled loop (its last copy, marked Stale), from
// a goroutine a handler waits for, as wait.Do's is (its own loop answers while it is parked),
// and once the server has stopped (final counts).
func TestStatsStoppedAndStalled(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var fromHandler serve.Stats
	var srv atomic.Pointer[serve.Server]
	s, addr := startServer(t, func(c *serve.Ctx) {
		switch c.Path() {
		case "/block":
			<-release // blocks the loop, on purpose
		case "/stats":
			w := c.Waker()
			go func() {
				st := srv.Load().Stats()
				mu.Lock()
				fromHandler = st
				mu.Unlock()
				w.Wake(nil)
			}()
			c.Suspend(0)
		}
	}, serve.Options{Loops: 1, StallThreshold: time.Hour})
	srv.Store(s)
	c := dial(t, addr)
	c.Send("GET /stats HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	mu.Lock()
	if fromHandler.Total.Conns.Parked != 1 || fromHandler.Total.Stale {
		t.Errorf("for a parked handler: %+v", fromHandler.Total)
	}
	mu.Unlock()
	before := s.Stats().Total
	c.Send("GET /block HTTP/1.1\r\nHost: h\r\n\r\n")
	st := waitStats(t, s, "a stale copy", func(ls serve.LoopStats) bool { return ls.Stale })
	if st.Requests != before.Requests {
		t.Errorf("stale copy has %d requests, the last %d", st.Requests, before.Requests)
	}
	close(release)
	c.Response("GET")
	waitStats(t, s, "a fresh copy", func(ls serve.LoopStats) bool { return !ls.Stale && ls.Requests == 2 })
	s.Shutdown(t.Context())
	<-s.Done
	st = s.Stats().Total
	if !st.Stopped || st.Conns.Open != 0 || st.Requests != 2 || st.Accepted != 1 {
		t.Errorf("after the shutdown: %+v", st)
	}
}

// TestStatsRefusedOnLoop checks that Stats, which waits for every loop, panics when code of a
// loop calls it — a handler, a Post callback — rather than holding its loop up, and says
// where to call it instead.
func TestStatsRefusedOnLoop(t *testing.T) {
	var srv atomic.Pointer[serve.Server]
	refusal := func() (msg string) {
		defer func() { msg, _ = recover().(string) }()
		srv.Load().Stats()
		return ""
	}
	fromHandler := make(chan string, 1)
	loops := make(chan *serve.Loop, 1)
	s, addr := startServer(t, func(c *serve.Ctx) {
		fromHandler <- refusal()
		loops <- c.Seam().Loop()
	}, serve.Options{Loops: 1})
	srv.Store(s)
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	fromCallback := make(chan string, 1)
	if err := receive(t, "the loop", loops).Post(func() { fromCallback <- refusal() }); err != nil {
		t.Fatal(err)
	}
	for where, msg := range map[string]string{
		"a handler":       receive(t, "the handler's call", fromHandler),
		"a Post callback": receive(t, "the callback's call", fromCallback),
	} {
		if !strings.Contains(msg, "Server.Stats called on a loop") || !strings.Contains(msg, "wait.Do") {
			t.Errorf("Stats from %s: panicked with %q", where, msg)
		}
	}
	if st := s.Stats().Total; st.Requests != 1 || st.Stale {
		t.Errorf("from the test's goroutine: %+v", st)
	}
}
