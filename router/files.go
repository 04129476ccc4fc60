package router

import (
	"strings"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
)

// ServeFiles serves the files of the directory root under pattern, which must end in
// "/*filepath": r.ServeFiles("/static/*filepath", "./public") answers GET and HEAD
// /static/css/site.css with ./public/css/site.css. Files go out through body.ServeRoot: with
// Range and conditional requests, with sendfile, never from outside root — a path with a ".."
// segment, in any encoding, is refused, and a symbolic link out of root is not followed — and
// with no directory listings.
func (r *Router) ServeFiles(pattern, root string) { r.group().ServeFiles(pattern, root) }

// ServeFiles is Router.ServeFiles for the group: pattern follows the group's prefix.
func (g *Group) ServeFiles(pattern, root string) {
	if !strings.HasSuffix(pattern, "/*filepath") {
		panic("dwell: ServeFiles pattern " + pattern + " must end in /*filepath")
	}
	h := func(c *core.Ctx) { body.ServeRoot(c, root, c.Param("filepath")) }
	g.Handle("GET", pattern, h)
	g.Handle("HEAD", pattern, h)
}
