//go:build !race && linux && !dwell_portable

package router

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestServeFSAllocations: a file of an embed.FS served through a route costs one allocation,
// the route parameter's copy (the name, owned as every string a Ctx hands out), and nothing
// more; through fs.Sub, two more (the sub-FS's joined name and the open file). ServeFiles is measured beside them for comparison:
// its parameter copy and its stat(2) of the path.
func TestServeFSAllocations(t *testing.T) {
	static, _ := fs.Sub(site, "testdata/servefs/static")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "app.js"), []byte(siteFile(t, "static/app.js")), 0o644)
	for _, tc := range []struct {
		name, target, header string
		route                func(r *Router)
		want                 float64 // -1: only logged
	}{
		{"embed.FS", "/testdata/servefs/static/app.js", "", func(r *Router) {
			r.ServeFS("/*filepath", site, body.FSOptions{CacheControl: "no-cache"})
		}, 1},
		{"embed.FS, br", "/testdata/servefs/static/app.js", "Accept-Encoding: gzip, deflate, br, zstd\r\n", func(r *Router) {
			r.ServeFS("/*filepath", site, body.FSOptions{CacheControl: "no-cache"})
		}, 1},
		{"fs.Sub of an embed.FS", "/static/app.js", "", func(r *Router) {
			r.ServeFS("/static/*filepath", static, body.FSOptions{})
		}, 3},
		{"ServeFiles", "/static/app.js", "", func(r *Router) { r.ServeFiles("/static/*filepath", dir) }, -1},
	} {
		r := New()
		tc.route(r)
		rt := coretest.NewRoundTripper(t, serve(t, r), "GET "+tc.target+" HTTP/1.1\r\nHost: h\r\n"+tc.header+"\r\n")
		for range 20 {
			rt.Do(t)
		}
		n := testing.AllocsPerRun(500, func() { rt.Do(t) })
		t.Logf("%s: %v allocations per request", tc.name, n)
		if tc.want >= 0 && n != tc.want {
			t.Errorf("%s: %v allocations per request, want %v", tc.name, n, tc.want)
		}
	}
}
