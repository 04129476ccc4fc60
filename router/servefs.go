package router

import (
	"io/fs"
	"strings"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
)

// ServeFS serves the files of fsys under pattern, which must end in "/*filepath", as
// ServeFiles does those of a directory: r.ServeFS("/static/*filepath", assets, o) answers GET
// and HEAD /static/app.js with the file app.js of assets. Files go out through a body.FS made
// with o, which says what is sent: Range and conditional requests, a strong ETag from the
// content where the FS keeps no modification times (an embed.FS), o.CacheControl, and a
// precompressed app.js.br or app.js.gz for a client that accepts it; never a file outside
// fsys, nor a directory listing.
//
// To serve a directory of an embed.FS (//go:embed static), pass fs.Sub(assets, "static"). For
// one file at a route of its own (a page at "/"), make the body.FS and call its Serve from the
// route's handler.
func (r *Router) ServeFS(pattern string, fsys fs.FS, o body.FSOptions) {
	r.group().ServeFS(pattern, fsys, o)
}

// ServeFS is Router.ServeFS for the group: pattern follows the group's prefix.
func (g *Group) ServeFS(pattern string, fsys fs.FS, o body.FSOptions) {
	if !strings.HasSuffix(pattern, "/*filepath") {
		panic("dwell: ServeFS pattern " + pattern + " must end in /*filepath")
	}
	files := body.NewFS(fsys, o)
	h := func(c *core.Ctx) { files.Serve(c, c.Param("filepath")) }
	g.Handle("GET", pattern, h)
	g.Handle("HEAD", pattern, h)
}
