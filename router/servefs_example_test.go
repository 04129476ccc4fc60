package router_test

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
	"net/http"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/router"
)

// assets holds a page and, under static/, a script with its precompressed siblings app.js.br
// and app.js.gz (made at build time: brotli -k app.js, gzip -k app.js).
//
//go:embed testdata/servefs
var assets embed.FS

// Serve a page at / and its assets under /static/ from an embed.FS. The assets' names would
// change with their content (app.3f2a9c.js), so caches may keep them for a year without asking;
// the page's name stays, so caches revalidate it, and a 304 answers when it has not changed.
func ExampleRouter_ServeFS() {
	static, err := fs.Sub(assets, "testdata/servefs/static")
	if err != nil {
		panic(err)
	}
	r := router.New()
	page := body.NewFS(assets, body.FSOptions{CacheControl: "no-cache"})
	r.GET("/", func(c *core.Ctx) { page.Serve(c, "testdata/servefs/index.html") })
	r.ServeFS("/static/*filepath", static, body.FSOptions{CacheControl: "public, max-age=31536000, immutable"})
	url, stop := start(r.Handler())
	defer stop()

	show := func(path string, header ...string) *http.Response {
		req, _ := http.NewRequest("GET", url+path, nil)
		for i := 0; i < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req) // an Accept-Encoding set here is left to us to decode
		if err != nil {
			panic(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Printf("%s %d %s, %d bytes", path, resp.StatusCode, resp.Header.Get("Content-Type"), n)
		if ce := resp.Header.Get("Content-Encoding"); ce != "" {
			fmt.Printf(", Content-Encoding: %s", ce)
		}
		fmt.Printf("\n  Cache-Control: %s\n", resp.Header.Get("Cache-Control"))
		return resp
	}
	first := show("/")
	show("/", "If-None-Match", first.Header.Get("ETag"))
	show("/static/app.js", "Accept-Encoding", "identity")
	show("/static/app.js", "Accept-Encoding", "gzip, deflate, br")
	show("/static/app.js", "Accept-Encoding", "gzip")
	// Output:
	// / 200 text/html; charset=utf-8, 179 bytes
	//   Cache-Control: no-cache
	// / 304 , 0 bytes
	//   Cache-Control: no-cache
	// /static/app.js 200 text/javascript; charset=utf-8, 328 bytes
	//   Cache-Control: public, max-age=31536000, immutable
	// /static/app.js 200 text/javascript; charset=utf-8, 157 bytes, Content-Encoding: br
	//   Cache-Control: public, max-age=31536000, immutable
	// /static/app.js 200 text/javascript; charset=utf-8, 224 bytes, Content-Encoding: gzip
	//   Cache-Control: public, max-age=31536000, immutable
}
