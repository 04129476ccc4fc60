package router

import (
	"compress/gzip"
	"embed"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
)

// site is a page and its assets: static/app.js has Brotli and gzip siblings.
//
//go:embed testdata/servefs
var site embed.FS

func siteFile(t testing.TB, name string) string {
	b, err := fs.ReadFile(site, "testdata/servefs/"+name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// siteRouter serves the page at / and the assets under /assets/static/, as an application does.
func siteRouter(t testing.TB) *Router {
	static, err := fs.Sub(site, "testdata/servefs/static")
	if err != nil {
		t.Fatal(err)
	}
	r := New()
	page := body.NewFS(site, body.FSOptions{CacheControl: "no-cache"})
	r.GET("/", func(c *core.Ctx) { page.Serve(c, "testdata/servefs/index.html") })
	r.Group("/assets").ServeFS("/static/*filepath", static, body.FSOptions{CacheControl: "public, max-age=31536000, immutable"})
	return r
}

func TestServeFS(t *testing.T) {
	r := siteRouter(t)
	c := dial(t, serve(t, r))
	resp, got := c.do("GET", "/")
	if resp.StatusCode != 200 || got != siteFile(t, "index.html") || resp.Header.Get("Cache-Control") != "no-cache" ||
		resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || resp.Header.Get("ETag") == "" {
		t.Fatalf("GET /: %d %q %v", resp.StatusCode, got, resp.Header)
	}
	if resp, _ := c.do("GET", "/", "If-None-Match: "+resp.Header.Get("ETag")); resp.StatusCode != 304 {
		t.Errorf("GET / If-None-Match: %d", resp.StatusCode)
	}
	js, br := siteFile(t, "static/app.js"), siteFile(t, "static/app.js.br")
	resp, got = c.do("GET", "/assets/static/app.js")
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || got != js || resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" ||
		resp.Header.Get("Vary") != "Accept-Encoding" || etag == "" {
		t.Fatalf("GET app.js: %d %q %v", resp.StatusCode, got, resp.Header)
	}
	for _, tt := range []struct {
		method, target string
		headers        []string
		status         int
		body, coding   string
	}{
		{"HEAD", "/assets/static/app.js", nil, 200, "", ""},
		{"GET", "/assets/static/app.js", []string{"If-None-Match: " + etag}, 304, "", ""},
		{"GET", "/assets/static/app.js", []string{"Accept-Encoding: gzip, br"}, 200, br, "br"},
		{"GET", "/assets/static/app.js", []string{"Accept-Encoding: br", "Range: bytes=0-4"}, 206, br[:5], "br"},
		{"GET", "/assets/static/style.css", []string{"Accept-Encoding: br"}, 200, siteFile(t, "static/style.css"), ""},
		{"GET", "/assets/static/missing.js", nil, 404, "", ""},
		{"GET", "/assets/static/", nil, 404, "", ""}, // no index.html, no listing
		{"POST", "/assets/static/app.js", nil, 405, "", ""},
	} {
		resp, got := c.do(tt.method, tt.target, tt.headers...)
		if resp.StatusCode != tt.status || tt.body != "" && got != tt.body || resp.Header.Get("Content-Encoding") != tt.coding {
			t.Errorf("%s %s %v: %d %q %v", tt.method, tt.target, tt.headers, resp.StatusCode, got, resp.Header)
		}
		if resp.Close {
			c = dial(t, serve(t, r))
		}
	}
	for _, target := range []string{"/assets/static/../../index.html", "/assets/static/%2e%2e/x", "/assets/static/..%2f..%2fx"} {
		c := dial(t, serve(t, r))
		if resp, got := c.do("GET", target); resp.StatusCode < 300 || strings.Contains(got, "<html") {
			t.Errorf("GET %s: %d %q", target, resp.StatusCode, got)
		}
	}
	if msg := catchPanic(func() { New().ServeFS("/static/", site, body.FSOptions{}) }); !strings.HasPrefix(msg, "dwell: ServeFS pattern") {
		t.Errorf("ServeFS without /*filepath: panic %q", msg)
	}
}

// TestServeFSBorrowedName: the route hands Serve the parameter's bytes without a copy; what
// the FS keeps must be its own, so a connection asking for one name after another still gets
// each file, described once.
func TestServeFSBorrowedName(t *testing.T) {
	r := New()
	r.ServeFS("/*filepath", site, body.FSOptions{})
	c := dial(t, serve(t, r))
	names := []string{"index.html", "static/app.js", "static/style.css", "static/app.js.gz", "static/app.js.br"}
	for i := range 3 * len(names) {
		name := names[(i*3)%len(names)]
		if resp, got := c.do("GET", "/testdata/servefs/"+name); resp.StatusCode != 200 || got != siteFile(t, name) {
			t.Fatalf("%s: %d %q", name, resp.StatusCode, got)
		}
	}
}

// TestServeFSUnderCompress: behind middleware.Compress, a precompressed sibling goes out as it
// is — the middleware leaves an encoded body alone — and a file without one is compressed by
// the middleware instead.
func TestServeFSUnderCompress(t *testing.T) {
	r := New()
	r.Use(middleware.Compress(middleware.CompressOptions{MinSize: -1}))
	r.ServeFS("/*filepath", site, body.FSOptions{})
	c := dial(t, serve(t, r))
	for _, tt := range []struct{ name, ae, coding, body string }{
		{"static/app.js", "gzip, br", "br", siteFile(t, "static/app.js.br")},
		{"static/app.js", "gzip", "gzip", siteFile(t, "static/app.js.gz")},
		{"static/app.js", "", "", siteFile(t, "static/app.js")},
	} {
		resp, got := c.do("GET", "/testdata/servefs/"+tt.name, "Accept-Encoding: "+tt.ae)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != tt.coding || got != tt.body {
			t.Errorf("%s, Accept-Encoding %q: %d %v (%d bytes)", tt.name, tt.ae, resp.StatusCode, resp.Header, len(got))
		}
	}
	resp, got := c.do("GET", "/testdata/servefs/static/style.css", "Accept-Encoding: gzip")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("style.css: %d %v", resp.StatusCode, resp.Header)
	}
	zr, err := gzip.NewReader(strings.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(zr); err != nil || string(b) != siteFile(t, "static/style.css") {
		t.Errorf("style.css compressed by the middleware: %q %v", b, err)
	}
}
