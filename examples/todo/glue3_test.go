package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/router"
	"github.com/dwellhttp/dwell/session"
	"github.com/dwellhttp/dwell/wait"
	"github.com/dwellhttp/dwell/websocket"
)

// livepoll is the glue a live-updating service on dwell had to write by hand — a per-address
// rate limiter (53 lines), files from an fs.FS with an ETag and Cache-Control (31), a WebSocket
// that follows a topic in the event style (73), a topic that continues a durable history (25),
// guards that want a session, for JSON and for pages (20), and its two listeners, HTTPS and the
// plain redirect, started and shut down together (20): 222 lines — rebuilt on what dwell has
// now: 32 lines here and 3 in listeners. history is the service's store of messages, which save
// writes to: message seq is saved before it is published, under the lock that orders the posts.
func livepoll(assets fs.FS, history wait.Store[string], save func(seq uint64, msg string), sessions *session.Store[string]) core.Handler {
	topic := wait.NewStoredTopic(100, history)
	feed := &websocket.Feed[string]{Topic: topic, CaughtUp: true,
		Encode: func(b []byte, msgs []string, last uint64, _ error) []byte {
			out, _ := json.Marshal(map[string]any{"last": last, "msgs": msgs})
			return append(b, out...)
		},
	}
	var posting sync.Mutex
	limit := middleware.RateLimit(middleware.RateLimitOptions{Rate: 5, Period: time.Hour})
	signedIn := session.Require(sessions, session.RequireOptions{SignIn: "/login", Next: "next"})
	r := router.New()
	r.ServeFS("/static/*filepath", assets, body.FSOptions{CacheControl: "public, max-age=3600"})
	r.POST("/messages", limit(signedIn(func(c *core.Ctx) {
		msg, err := io.ReadAll(body.Reader(c))
		if err != nil {
			return
		}
		posting.Lock()
		defer posting.Unlock()
		save(topic.Last()+1, string(msg))
		topic.Publish(string(msg))
		c.SetStatus(204)
	})))
	r.GET("/follow", signedIn(func(c *core.Ctx) {
		after, _ := strconv.ParseUint(c.Query("after"), 10, 64)
		if ws, err := websocket.Serve(c, nil, &websocket.Events{}); err == nil {
			feed.Follow(c, ws, after)
		}
	}))
	return r.Handler()
}

// listeners is the server of the service's two listeners: h over HTTPS on httpsAddr, and every
// plain request on plainAddr redirected there, whatever port httpsAddr picks.
func listeners(h core.Handler, cfg *tls.Config, httpsAddr, plainAddr string) *core.Server {
	srv := core.NewServer(h, core.Options{Addr: httpsAddr, TLSConfig: cfg})
	srv.AddListener(core.Listener{Addr: plainAddr, Handler: router.RedirectToHTTPSAddr(srv.Addr)})
	return srv
}

// memoryLog is a service's durable store for the test: messages a previous process saved, and
// those saved since, numbered from 1.
type memoryLog struct {
	mu   sync.Mutex
	msgs []string // message seq is msgs[seq-1]
}

func (l *memoryLog) save(seq uint64, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if seq != uint64(len(l.msgs))+1 {
		panic("message " + strconv.FormatUint(seq, 10) + " saved out of order")
	}
	l.msgs = append(l.msgs, msg)
}

// read is the Store's Read.
func (l *memoryLog) read(_ context.Context, after, upto uint64, limit int) ([]string, uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	upto = min(upto, uint64(len(l.msgs)), after+uint64(limit))
	return append([]string(nil), l.msgs[after:upto]...), upto, nil
}

// TestLivepoll exercises each piece of the glue through a server: the stored topic answering an
// old cursor from its store, the Feed sending that catch-up and then a live message, the files
// with their ETag, Cache-Control and 304, the guards refusing a script without a session in
// JSON and sending a browser to sign in, and the rate limit's 429 for one address, not another.
func TestLivepoll(t *testing.T) {
	log := &memoryLog{msgs: []string{"one", "two", "three"}} // a previous process's
	sessions, err := session.New[string](session.Options{Keys: [][]byte{[]byte(strings.Repeat("k", 32))}, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	assets := fstest.MapFS{"app.js": {Data: []byte("console.log('live')")}}
	h := livepoll(assets, wait.Store[string]{Last: 3, Read: log.read}, log.save, sessions)
	_, addr := coretest.Serve(t, h, core.Options{WriteRefusal: middleware.JSONRefusal})
	base := "http://" + addr
	// A session, sealed as the service's sign-in would.
	signIn := coretest.Do(t, func(c *core.Ctx) { sessions.Save(c, "ada") }, coretest.NewRequest("POST", "/", nil))
	cookie := "Cookie: " + strings.Split(signIn.Header.Get("Set-Cookie"), ";")[0]
	get := func(c *http.Client, method, target, body string, fields ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+target, strings.NewReader(body))
		for _, f := range fields {
			k, v, _ := strings.Cut(f, ": ")
			req.Header.Set(k, v)
		}
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	ada, bob := from("127.0.0.1"), from("127.0.0.2")

	// A follower from cursor 1: two and three from the store, the sign it is live, then four
	// as it is posted, numbered on from the store's last, and saved before it came.
	ws := dialWS(t, addr, "/follow?after=1", cookie)
	for _, want := range []string{`{"last":3,"msgs":["two","three"]}`, `{"last":3,"msgs":null}`} {
		if got := ws.readText(); string(got) != want {
			t.Fatalf("follower: %s, want %s", got, want)
		}
	}
	if resp, body := get(ada, "POST", "/messages", "four", cookie); resp.StatusCode != 204 {
		t.Fatalf("a post: %d %q", resp.StatusCode, body)
	}
	if got := ws.readText(); string(got) != `{"last":4,"msgs":["four"]}` {
		t.Fatalf("live: %s", got)
	}
	if saved, _, _ := log.read(t.Context(), 3, 4, 1); len(saved) != 1 || saved[0] != "four" {
		t.Fatalf("the store has %q after 3", saved)
	}

	resp, body := get(ada, "GET", "/static/app.js", "")
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || body != "console.log('live')" || !strings.HasPrefix(etag, `"`) || resp.Header.Get("Cache-Control") != "public, max-age=3600" {
		t.Fatalf("a file: %d %q %q", resp.StatusCode, resp.Header, body)
	}
	if resp, _ := get(ada, "GET", "/static/app.js", "", "If-None-Match: "+etag); resp.StatusCode != 304 {
		t.Fatalf("a file, If-None-Match its ETag: %d", resp.StatusCode)
	}

	if resp, body := get(ada, "GET", "/follow", "", "Accept: application/json"); resp.StatusCode != 403 || body != `{"error":"sign in first"}`+"\n" {
		t.Fatalf("a script without a session: %d %q", resp.StatusCode, body)
	}
	if resp, _ := get(ada, "GET", "/follow?after=1", "", "Accept: text/html"); resp.StatusCode != 303 || resp.Header.Get("Location") != "/login?next=%2Ffollow%3Fafter%3D1" {
		t.Fatalf("a browser without a session: %d %q", resp.StatusCode, resp.Header)
	}

	// Ada posted once; four more, then the limit. Bob has his own.
	for i := range 4 {
		if resp, body := get(ada, "POST", "/messages", "more", cookie); resp.StatusCode != 204 {
			t.Fatalf("post %d: %d %q", i+2, resp.StatusCode, body)
		}
	}
	if resp, body := get(ada, "POST", "/messages", "more", cookie); resp.StatusCode != 429 || body != `{"error":"rate limit exceeded"}`+"\n" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("post 6: %d %q %q", resp.StatusCode, resp.Header, body)
	}
	if resp, body := get(bob, "POST", "/messages", "mine", cookie); resp.StatusCode != 204 {
		t.Fatalf("another address: %d %q", resp.StatusCode, body)
	}
}

// TestLivepollListeners: the HTTPS listener serves, the plain one redirects to it, and one
// Shutdown stops both.
func TestLivepollListeners(t *testing.T) {
	crt := coretest.NewCertificate(t)
	cert, err := tls.LoadX509KeyPair(crt.CertFile, crt.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := listeners(func(c *core.Ctx) { c.WriteString("live over " + c.Scheme()) },
		&tls.Config{Certificates: []tls.Certificate{cert}}, "127.0.0.1:0", "127.0.0.1:0")
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	addrs := srv.Addrs()
	_, httpsPort, _ := net.SplitHostPort(addrs[0].String())
	_, plainPort, _ := net.SplitHostPort(addrs[1].String())
	client := &http.Client{Timeout: coretest.Patience, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: crt.Pool}}}
	var via []string
	client.CheckRedirect = func(req *http.Request, _ []*http.Request) error { via = append(via, req.URL.String()); return nil }
	resp, err := client.Get("http://localhost:" + plainPort + "/page")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "live over https" || len(via) != 1 || via[0] != "https://localhost:"+httpsPort+"/page" {
		t.Fatalf("by the plain port: %q, redirected to %q", body, via)
	}
	if err := srv.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != core.ErrServerClosed {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if c, err := net.Dial("tcp", a.String()); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after Shutdown", a)
		}
	}
}
