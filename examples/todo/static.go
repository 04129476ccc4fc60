package main

import (
	"embed"
	"io/fs"
	"path"
	"strings"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
)

// The page: GET / is static/index.html, a list that follows the changes (app.js), and GET
// /static/NAME its other files. They are embedded in the binary, each beside its gzip sibling
// (NAME.gz, made with `gzip -k -n -9`: reproducible, no name or time inside), which a body.FS
// sends to clients that accept gzip, with its own ETag; a 304 answers a matching If-None-Match.
//
// The page is revalidated on every load (no-cache: a 304 when it is unchanged), so that a new
// release shows at once; the files it names are cached for a year, as they never change under
// their URLs: the page asks for them as /static/app.js?v=HASH, where HASH is the start of the
// file's SHA-256 (TestStaticFiles checks it, and that each .gz is its file's), so that a file
// changed is a URL never cached.
//
// After editing a file of static/, run go generate, which makes its .gz again, and put the
// hash TestStaticFiles names into index.html.
//
//go:generate sh -c "cd static && rm -f *.gz && gzip -k -n -9 index.html app.js app.css"

//go:embed static
var static embed.FS

// pagePolicy is the page's Content-Security-Policy: its own script and style, requests to its
// own origin (WebSockets included), nothing else — no inline script for data to turn into one.
const pagePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// A site serves the embedded files.
type site struct {
	page   *body.FS          // index.html: no-cache
	assets *body.FS          // the files it names: cached for a year
	names  map[string]string // /static/'s names ("/app.js") to their names in static
}

// newSite lists the embedded files. Only the files themselves have a URL: index.html has "/",
// and a .gz is sent in its file's place, never under its own name.
func newSite() *site {
	s := &site{
		// static is an embed.FS itself, not fs.Sub of one: body.FS then opens each file once.
		page:   body.NewFS(static, body.FSOptions{CacheControl: "no-cache"}),
		assets: body.NewFS(static, body.FSOptions{CacheControl: "public, max-age=31536000, immutable"}),
		names:  map[string]string{},
	}
	entries, _ := fs.ReadDir(static, "static")
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && n != "index.html" && !strings.HasSuffix(n, ".gz") {
			s.names["/"+n] = path.Join("static", n)
		}
	}
	return s
}

// index handles GET and HEAD /.
func (s *site) index(c *core.Ctx) {
	c.SetHeader("Content-Security-Policy", pagePolicy)
	c.SetHeader("X-Content-Type-Options", "nosniff")
	s.page.Serve(c, "static/index.html")
}

// asset handles GET and HEAD /static/*filepath. A name that is not one of the files gets the
// API's 404, in JSON, as any unknown path.
func (s *site) asset(c *core.Ctx) {
	name, ok := s.names[c.Param("filepath")]
	if !ok {
		fail(c, 404, "no such resource")
		return
	}
	c.SetHeader("X-Content-Type-Options", "nosniff")
	s.assets.Serve(c, name)
}
