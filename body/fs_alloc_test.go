//go:build !race && linux && !dwell_portable

package body_test

import (
	"io/fs"
	"os"
	"testing"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestFSAllocations: answering GET for a small file of an embed.FS allocates nothing once the
// file is described, in whichever coding: the description and the open file are kept. On an
// FS that may change, each request opens the file, which costs what the FS's Open and Stat
// allocate (fs.Sub of an embed.FS: the joined name and the open file).
func TestFSAllocations(t *testing.T) {
	sub, _ := fs.Sub(embedded, "testdata/fs")
	for _, tc := range []struct {
		name   string
		fsys   fs.FS
		file   string
		header string
		want   float64 // -1: only logged, the figure is the FS's own
	}{
		{"embed", embedded, "testdata/fs/app.js", "", 0},
		{"embed, br", embedded, "testdata/fs/app.js", "Accept-Encoding: gzip, deflate, br, zstd\r\n", 0},
		{"embed, gzip", embedded, "testdata/fs/app.js", "Accept-Encoding: gzip\r\n", 0},
		{"embed, no sibling", embedded, "testdata/fs/data.json", "Accept-Encoding: br\r\n", 0},
		{"embed, index", embedded, "testdata/fs", "", 0},
		{"fs.Sub of embed", sub, "app.js", "", 2},
		{"fs.Sub of embed, br", sub, "app.js", "Accept-Encoding: br\r\n", 2},
		{"mapfs", treeMapFS(t, fileTime), "app.js", "", -1},
		{"dirfs", os.DirFS("testdata/fs"), "app.js", "", -1},
	} {
		files := body.NewFS(tc.fsys, body.FSOptions{CacheControl: "no-cache"})
		_, addr := coretest.Serve(t, func(c *core.Ctx) { files.Serve(c, tc.file) }, core.Options{})
		rt := coretest.NewRoundTripper(t, addr, "GET / HTTP/1.1\r\nHost: h\r\n"+tc.header+"\r\n")
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
