package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/coretest"
)

// logLines is an io.Writer for the access log that hands over each line on a channel.
type logLines chan []byte

func (l logLines) Write(p []byte) (int, error) {
	l <- bytes.Clone(p)
	return len(p), nil
}

// next returns the next access log line of path, decoded; lines of other paths (requests a
// test made to set things up) are skipped.
func (l logLines) next(t testing.TB, path string) map[string]any {
	t.Helper()
	return l.find(t, func(m map[string]any) bool { return m["path"] == path })
}

// find returns the next access log line that match accepts, decoded, skipping the others.
func (l logLines) find(t testing.TB, match func(map[string]any) bool) map[string]any {
	t.Helper()
	for {
		select {
		case b := <-l:
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("log line %q: %v", b, err)
			}
			if match(m) {
				return m
			}
		case <-time.After(coretest.Patience):
			t.Fatal("no such log line")
			return nil
		}
	}
}

// testApp serves the application as main does, with cfg's settings (a temporary -dir, and
// -max-body 1 MiB unless cfg says otherwise), in process (coretest.NewClient: no port), and
// returns its base URL, which client's requests reach it at, the app and its access log.
func testApp(t *testing.T, cfg config) (string, *app, logLines) {
	t.Helper()
	a, logs := newTestApp(t, cfg)
	c := coretest.NewClient(t, a.handler(), serverOptions())
	a.serve(c.Server())
	return apps.add(t, c), a, logs
}

// newTestApp makes the application with cfg's settings, closed when the test ends.
func newTestApp(t *testing.T, cfg config) (*app, logLines) {
	t.Helper()
	if cfg.dir == "" {
		cfg.dir = t.TempDir()
	}
	if cfg.maxBody == 0 {
		cfg.maxBody = 1 << 20
	}
	logs := make(logLines, 1024)
	a, err := newApp(cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.close() }) // after the server's shutdown, registered later
	return a, logs
}

// testAppTCP is testApp on a loopback port, for the tests that speak to it over TCP
// themselves (a client that half-closes its connection); it returns the address.
func testAppTCP(t *testing.T, cfg config) (string, *app, logLines) {
	t.Helper()
	a, logs := newTestApp(t, cfg)
	srv, addr := coretest.Serve(t, a.handler(), serverOptions())
	a.serve(srv)
	return addr, a, logs
}

// inProcess routes client's requests for a test app's host to its in-process server, and the
// others (to a command the test started) over the network.
type inProcess struct {
	mu   sync.Mutex
	apps map[string]*coretest.Client
	n    int
	net  http.RoundTripper
}

var apps = &inProcess{apps: map[string]*coretest.Client{}, net: &http.Transport{DisableCompression: true}}

// add gives c a host of its own until the test ends, and returns its base URL.
func (p *inProcess) add(t *testing.T, c *coretest.Client) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	host := "todo-" + strconv.Itoa(p.n) + ".test"
	p.apps[host] = c
	t.Cleanup(func() {
		p.mu.Lock()
		delete(p.apps, host)
		p.mu.Unlock()
	})
	return "http://" + host
}

// RoundTrip runs req on its app's server, returning the response once its head has come (the
// body read as the server sends it: an event stream too).
func (p *inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	p.mu.Lock()
	c := p.apps[req.URL.Host]
	p.mu.Unlock()
	if c == nil {
		return p.net.RoundTrip(req)
	}
	x := c.Start(req)
	resp := x.Stream()
	resp.Body = &exchangeBody{resp.Body, x}
	return resp, nil
}

// exchangeBody is the body of an in-process response: closing it leaves the exchange, as
// closing a net/http response's body closes a connection not read to its end.
type exchangeBody struct {
	io.ReadCloser
	x *coretest.Exchange
}

func (b *exchangeBody) Close() error {
	b.x.Close()
	return b.ReadCloser.Close()
}

// client makes requests without following redirects or decoding gzip, so that tests see
// responses as they are sent.
var client = &http.Client{
	Transport:     apps,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// do makes a request with body (a string, or "" for none) and header fields ("Name: value"),
// and returns the response with its body read.
func do(t testing.TB, method, url, body string, fields ...string) (*http.Response, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fields {
		k, v, _ := strings.Cut(f, ": ")
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("X-Request-Id") == "" {
		t.Fatalf("%s %s: %d without an X-Request-Id", method, url, resp.StatusCode)
	}
	return resp, string(b)
}

const jsonType = "Content-Type: application/json"

// errorOf decodes an error answer, failing unless it is {"error": "..."} as JSON.
func errorOf(t testing.TB, resp *http.Response, body string) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(body), &e) != nil || e.Error == "" {
		t.Fatalf("%d %q %q: not a JSON error", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	return e.Error
}

// doBody is do with the body sent chunked when asked, as a client streaming it would.
func doBody(t testing.TB, method, url, body string, isChunked bool, fields ...string) (*http.Response, string) {
	t.Helper()
	if !isChunked {
		return do(t, method, url, body, fields...)
	}
	req, err := http.NewRequest(method, url, io.MultiReader(strings.NewReader(`{"title":"`), strings.NewReader(strings.Repeat("x", 1000)), strings.NewReader(`"}`)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fields {
		k, v, _ := strings.Cut(f, ": ")
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// gunzip decodes a gzip body.
func gunzip(t testing.TB, s string) string {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readResponse reads a response head from c, leaving its body to be read.
func readResponse(c *coretest.Conn) (*http.Response, error) {
	c.SetReadDeadline(time.Now().Add(coretest.Patience))
	return http.ReadResponse(c.R, nil)
}
