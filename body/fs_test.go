package body_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// The tree of testdata/fs: pages, a script and a page with Brotli and gzip siblings, a style
// sheet with a gzip sibling only, a JSON file with none, a file without extension, an empty
// one, a directory with an index and one without.
//
//go:embed testdata/fs
var embedded embed.FS

// fsContent returns the content of a file of the tree.
func fsContent(t *testing.T, name string) string {
	t.Helper()
	b, err := fs.ReadFile(embedded, "testdata/fs/"+name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// contentETag is the ETag an FS makes from content where it has no modification time.
func contentETag(content string) string {
	sum := sha256.Sum256([]byte(content))
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
}

// An fsKind is one way of holding the tree: every kind must serve it alike, but for the
// validators, which come from modification times where the FS has them.
type fsKind struct {
	name    string
	fsys    fs.FS
	prefix  string // what the handler puts before the request's path to make the name served
	modtime bool   // the FS gives modification times (fileTime, or the checkout's for dirfs)
}

func fsKinds(t *testing.T) []fsKind {
	sub, err := fs.Sub(embedded, "testdata/fs")
	if err != nil {
		t.Fatal(err)
	}
	return []fsKind{
		{"embed", embedded, "testdata/fs", false}, // described once, files kept open
		{"embed-sub", sub, "", false},             // an FS that may change, without times
		{"mapfs", treeMapFS(t, fileTime), "", true},
		{"mapfs-notime", treeMapFS(t, time.Time{}), "", false},
		{"dirfs", os.DirFS("testdata/fs"), "", true}, // *os.File: sendfile
		{"zip", treeZip(t), "", true},                // files that neither seek nor read at offsets
	}
}

// treeMapFS copies the tree into an fstest.MapFS whose files were modified at mod.
func treeMapFS(t *testing.T, mod time.Time) fstest.MapFS {
	m := fstest.MapFS{}
	err := fs.WalkDir(embedded, "testdata/fs", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(embedded, p)
		m[strings.TrimPrefix(p, "testdata/fs/")] = &fstest.MapFile{Data: b, Mode: 0o644, ModTime: mod}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// treeZip copies the tree into a zip archive, deflated, so that its files can only be read
// forward.
func treeZip(t *testing.T) fs.FS {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for name, f := range treeMapFS(t, fileTime) {
		fw, err := w.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: fileTime})
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(f.Data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fsServer serves files under k's prefix with o, and returns the server's address.
func fsServer(t *testing.T, k fsKind, o body.FSOptions) string {
	files := body.NewFS(k.fsys, o)
	_, addr := coretest.Serve(t, func(c *core.Ctx) { files.Serve(c, k.prefix+c.Path()) }, core.Options{})
	return addr
}

const immutable = "public, max-age=31536000, immutable"

// TestFSServe: every kind of FS answers GET and HEAD with the file, its type, its length, its
// validators and the Cache-Control asked for; a name that is missing, a directory without
// index, or one that leaves the FS is refused.
func TestFSServe(t *testing.T) {
	types := map[string]string{
		"index.html": "text/html; charset=utf-8",
		"app.js":     "text/javascript; charset=utf-8",
		"style.css":  "text/css; charset=utf-8",
		"data.json":  "application/json",
		"noext":      "text/html; charset=utf-8", // sniffed
		"empty.txt":  "text/plain; charset=utf-8",
	}
	for _, k := range fsKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			addr := fsServer(t, k, body.FSOptions{CacheControl: immutable})
			for name, ctype := range types {
				content := fsContent(t, name)
				for _, method := range []string{"GET", "HEAD"} {
					resp, got := get(t, addr, method, "/"+name)
					h := resp.Header
					want := content
					if method == "HEAD" {
						want = ""
					}
					if resp.StatusCode != 200 || got != want || h.Get("Content-Type") != ctype ||
						h.Get("Content-Length") != strconv.Itoa(len(content)) || h.Get("Accept-Ranges") != "bytes" ||
						h.Get("Cache-Control") != immutable || h.Get("Content-Encoding") != "" {
						t.Errorf("%s /%s: %d %q %v", method, name, resp.StatusCode, got, h)
					}
					etag := h.Get("ETag")
					switch {
					case k.modtime && (h.Get("Last-Modified") == "" || !strings.HasPrefix(etag, `"`)):
						t.Errorf("%s /%s: validators %q %q", method, name, h.Get("Last-Modified"), etag)
					case !k.modtime && (h.Get("Last-Modified") != "" || etag != contentETag(content)):
						t.Errorf("%s /%s: validators %q %q, want the ETag %s", method, name,
							h.Get("Last-Modified"), etag, contentETag(content))
					}
					if k.name == "mapfs" && h.Get("Last-Modified") != lastMod {
						t.Errorf("%s /%s: Last-Modified %q, want %q", method, name, h.Get("Last-Modified"), lastMod)
					}
				}
			}
			for target, status := range map[string]int{
				"/missing.js":        404,
				"/nodir/":            404,
				"/nodir":             404,
				"/index.html/x":      404,
				"/../secret":         400,
				"/sub/../../x":       400,
				"/%2e%2e/x":          400, // decoded by the core before it is a name
				"/sub%2f..%2f..%2fx": 400,
				"/a%5cb":             400, // a backslash
				"/a%00b":             400,
			} {
				if resp, got := get(t, addr, "GET", target); resp.StatusCode != status ||
					resp.Header.Get("Cache-Control") != "" {
					t.Errorf("GET %s: %d %q %v, want %d without Cache-Control", target, resp.StatusCode, got,
						resp.Header, status)
				}
			}
		})
	}
}

// TestFSDirectories: a directory is served as its index.html, once redirected to its name with
// a slash; the root is a directory like another; a file named with a trailing slash is not
// found.
func TestFSDirectories(t *testing.T) {
	for _, k := range fsKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			addr := fsServer(t, k, body.FSOptions{})
			for target, want := range map[string]string{
				"/":               fsContent(t, "index.html"),
				"/index.html":     fsContent(t, "index.html"), // not redirected, unlike http.FileServerFS
				"/sub/":           fsContent(t, "sub/index.html"),
				"/./sub//":        fsContent(t, "sub/index.html"),
				"/sub/index.html": fsContent(t, "sub/index.html"),
			} {
				if resp, got := get(t, addr, "GET", target); resp.StatusCode != 200 || got != want ||
					resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
					t.Errorf("%s: %d %q", target, resp.StatusCode, got)
				}
			}
			if resp, _ := get(t, addr, "GET", "/sub?x=1"); resp.StatusCode != 301 || resp.Header.Get("Location") != "sub/?x=1" {
				t.Errorf("/sub: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
			}
			for _, target := range []string{"/index.html/", "/sub/index.html/"} { // a file named as a directory
				for range 2 { // described, then kept
					if resp, got := get(t, addr, "GET", target); resp.StatusCode != 404 {
						t.Errorf("%s: %d %q, want 404", target, resp.StatusCode, got)
					}
				}
			}
		})
	}
}

// TestFSConditional: If-None-Match with the ETag is answered 304 with the validators, the
// Cache-Control and the Vary of a 200, and no content; If-Modified-Since where the FS keeps
// times; If-Match that fails is 412.
func TestFSConditional(t *testing.T) {
	for _, k := range fsKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			addr := fsServer(t, k, body.FSOptions{CacheControl: "no-cache"})
			resp, _ := get(t, addr, "GET", "/app.js")
			etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
			for _, inm := range []string{etag, `"other", ` + etag, "W/" + etag, "*"} {
				resp, got := get(t, addr, "GET", "/app.js", "If-None-Match: "+inm)
				h := resp.Header
				if resp.StatusCode != 304 || got != "" || h.Get("ETag") != etag || h.Get("Cache-Control") != "no-cache" ||
					h.Get("Vary") != "Accept-Encoding" || h.Get("Content-Type") != "" || h.Get("Content-Encoding") != "" {
					t.Errorf("If-None-Match %s: %d %q %v", inm, resp.StatusCode, got, h)
				}
			}
			if resp, _ := get(t, addr, "GET", "/app.js", `If-None-Match: "other"`); resp.StatusCode != 200 {
				t.Errorf("If-None-Match another tag: %d", resp.StatusCode)
			}
			if resp, _ := get(t, addr, "HEAD", "/app.js", "If-None-Match: "+etag); resp.StatusCode != 304 {
				t.Errorf("HEAD If-None-Match: %d", resp.StatusCode)
			}
			if resp, _ := get(t, addr, "GET", "/app.js", `If-Match: "other"`); resp.StatusCode != 412 ||
				resp.Header.Get("Cache-Control") != "" {
				t.Errorf("If-Match another tag: %d %v", resp.StatusCode, resp.Header)
			}
			ims, _ := get(t, addr, "GET", "/app.js", "If-Modified-Since: "+lastMod)
			switch {
			case k.name == "mapfs" && ims.StatusCode != 304:
				t.Errorf("If-Modified-Since its time: %d", ims.StatusCode)
			case !k.modtime && (lm != "" || ims.StatusCode != 200):
				t.Errorf("If-Modified-Since without a time: %d (Last-Modified %q)", ims.StatusCode, lm)
			}
			if k.modtime {
				if resp, _ := get(t, addr, "GET", "/app.js", "If-Modified-Since: "+lm); resp.StatusCode != 304 {
					t.Errorf("If-Modified-Since %s: %d", lm, resp.StatusCode)
				}
			}
		})
	}
}

// TestFSRanges: a single range is answered 206 (for HEAD too), several with the whole file, an
// unsatisfiable one 416 with the size; If-Range with the ETag lets the range through, with
// another tag sends the whole file.
func TestFSRanges(t *testing.T) {
	content := fsContent(t, "app.js")
	size := strconv.Itoa(len(content))
	for _, k := range fsKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			addr := fsServer(t, k, body.FSOptions{CacheControl: immutable})
			resp, _ := get(t, addr, "HEAD", "/app.js")
			etag := resp.Header.Get("ETag")
			for _, tc := range []struct {
				method   string
				headers  []string
				status   int
				body     string
				rangeHdr string
			}{
				{"GET", []string{"Range: bytes=0-9"}, 206, content[:10], "bytes 0-9/" + size},
				{"GET", []string{"Range: bytes=100-"}, 206, content[100:], "bytes 100-" + strconv.Itoa(len(content)-1) + "/" + size},
				{"GET", []string{"Range: bytes=-5"}, 206, content[len(content)-5:], ""},
				{"HEAD", []string{"Range: bytes=0-9"}, 206, "", "bytes 0-9/" + size},
				{"GET", []string{"Range: bytes=0-1,5-6"}, 200, content, ""},
				{"GET", []string{"Range: bytes=1000-"}, 416, "", "bytes */" + size},
				{"GET", []string{"Range: bytes=0-9", "If-Range: " + etag}, 206, content[:10], ""},
				{"GET", []string{"Range: bytes=0-9", `If-Range: "other"`}, 200, content, ""},
			} {
				resp, got := get(t, addr, tc.method, "/app.js", tc.headers...)
				if resp.StatusCode != tc.status || tc.status != 416 && got != tc.body ||
					tc.rangeHdr != "" && resp.Header.Get("Content-Range") != tc.rangeHdr {
					t.Errorf("%s %v: %d %q %v", tc.method, tc.headers, resp.StatusCode, got, resp.Header)
				}
				if cc := resp.Header.Get("Cache-Control"); (tc.status == 416) != (cc == "") {
					t.Errorf("%s %v: %d with Cache-Control %q", tc.method, tc.headers, resp.StatusCode, cc)
				}
			}
		})
	}
}

// TestFSPrecompressed: the sibling the client's Accept-Encoding selects is sent with
// Content-Encoding, the type of the file itself, an ETag of its own, and Vary; ranges and
// preconditions apply to its bytes.
func TestFSPrecompressed(t *testing.T) {
	plain, br, gz := fsContent(t, "app.js"), fsContent(t, "app.js.br"), fsContent(t, "app.js.gz")
	for _, k := range fsKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			addr := fsServer(t, k, body.FSOptions{CacheControl: immutable})
			etags := map[string]string{} // by coding
			for _, tc := range []struct {
				ae, coding string
			}{
				{"", ""},
				{"br", "br"},
				{"BR", "br"},
				{"gzip", "gzip"},
				{"x-gzip", "gzip"},
				{"gzip, deflate, br, zstd", "br"}, // what browsers send: Brotli where weighed alike
				{"gzip, br;q=0.5", "gzip"},
				{"br;q=0.5, gzip;q=0.8", "gzip"},
				{"br;q=0.001, gzip;q=0", "br"},
				{"br;q=0, gzip;q=0", ""},
				{"gzip;q=0, *", "br"},
				{"*", "br"},
				{"*;q=0", ""},
				{"identity;q=0", ""}, // accepts nothing available: the file itself
				{"identity, br;q=0.5", ""},
				{"br;q=0.5, *", "gzip"}, // "*" weighs gzip, and the identity, above Brotli
				{"br;q=0.5, identity", ""},
				{"br;q=0.5, identity;q=0.5", "br"},
				{"deflate", ""},
				{"br;q=1.5, gzip", "gzip"}, // a malformed q-value refuses the coding
				{" gzip ; q=0.9 , br ; q=0.8 ", "gzip"},
			} {
				resp, got := get(t, addr, "GET", "/app.js", "Accept-Encoding: "+tc.ae)
				want := map[string]string{"": plain, "br": br, "gzip": gz}[tc.coding]
				h := resp.Header
				if resp.StatusCode != 200 || got != want || h.Get("Content-Encoding") != tc.coding ||
					h.Get("Content-Type") != "text/javascript; charset=utf-8" || h.Get("Vary") != "Accept-Encoding" ||
					h.Get("Content-Length") != strconv.Itoa(len(want)) || h.Get("Cache-Control") != immutable {
					t.Errorf("Accept-Encoding %q: %d %v (body %d bytes), want %q", tc.ae, resp.StatusCode, h, len(got), tc.coding)
					continue
				}
				etag := h.Get("ETag")
				if old, ok := etags[tc.coding]; ok && old != etag {
					t.Errorf("Accept-Encoding %q: ETag %s, before %s", tc.ae, etag, old)
				}
				etags[tc.coding] = etag
				if tc.coding != "" && !strings.HasSuffix(etag, "-"+tc.coding+`"`) {
					t.Errorf("Accept-Encoding %q: ETag %s", tc.ae, etag)
				}
			}
			if etags[""] == etags["br"] || etags[""] == etags["gzip"] || etags["br"] == etags["gzip"] {
				t.Errorf("ETags shared between codings: %v", etags)
			}
			if !k.modtime && etags["br"] != strings.TrimSuffix(contentETag(br), `"`)+`-br"` {
				t.Errorf("Brotli ETag %s, want one from its content", etags["br"])
			}

			// Preconditions and ranges on the compressed bytes.
			brSize := strconv.Itoa(len(br))
			for _, tc := range []struct {
				method  string
				headers []string
				status  int
				body    string
			}{
				{"HEAD", nil, 200, ""},
				{"GET", []string{"If-None-Match: " + etags["br"]}, 304, ""},
				{"GET", []string{"If-None-Match: " + etags[""]}, 200, br}, // the identity's tag
				{"GET", []string{"Range: bytes=0-9"}, 206, br[:10]},
				{"HEAD", []string{"Range: bytes=0-9"}, 206, ""},
				{"GET", []string{"Range: bytes=10-", "If-Range: " + etags["br"]}, 206, br[10:]},
				{"GET", []string{"Range: bytes=10-", "If-Range: " + etags[""]}, 200, br},
				{"GET", []string{"Range: bytes=" + brSize + "-"}, 416, ""},
			} {
				resp, got := get(t, addr, tc.method, "/app.js", append(tc.headers, "Accept-Encoding: br")...)
				h := resp.Header
				coding := "br"
				if tc.status == 304 || tc.status == 416 {
					coding = "" // no encoded content: no Content-Encoding
				}
				if resp.StatusCode != tc.status || tc.status != 416 && got != tc.body || h.Get("Content-Encoding") != coding ||
					h.Get("Vary") != "Accept-Encoding" {
					t.Errorf("br %s %v: %d %q %v", tc.method, tc.headers, resp.StatusCode, got, h)
				}
				switch tc.status {
				case 200:
					if tc.method == "HEAD" && h.Get("Content-Length") != brSize {
						t.Errorf("br HEAD: Content-Length %q, want %s", h.Get("Content-Length"), brSize)
					}
				case 206:
					if !strings.HasSuffix(h.Get("Content-Range"), "/"+brSize) {
						t.Errorf("br %v: Content-Range %q", tc.headers, h.Get("Content-Range"))
					}
				case 416:
					if h.Get("Content-Range") != "bytes */"+brSize {
						t.Errorf("br 416: Content-Range %q", h.Get("Content-Range"))
					}
				}
			}

			// A file with a gzip sibling only; one with none gets no Vary.
			for _, tc := range []struct{ name, ae, coding, vary string }{
				{"style.css", "br", "", "Accept-Encoding"},
				{"style.css", "br, gzip", "gzip", "Accept-Encoding"},
				{"data.json", "br, gzip", "", ""},
				{"", "gzip", "gzip", "Accept-Encoding"}, // a directory's index has siblings too
			} {
				resp, _ := get(t, addr, "GET", "/"+tc.name, "Accept-Encoding: "+tc.ae)
				if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != tc.coding || resp.Header.Get("Vary") != tc.vary {
					t.Errorf("/%s, Accept-Encoding %q: %d %v", tc.name, tc.ae, resp.StatusCode, resp.Header)
				}
			}
		})
	}
}

// A liveFS is an fstest.MapFS that a test changes while it is served, counting the bytes read
// from each file.
type liveFS struct {
	mu   sync.Mutex
	m    fstest.MapFS
	read map[string]int64
}

func newLiveFS(m fstest.MapFS) *liveFS { return &liveFS{m: m, read: map[string]int64{}} }

func (l *liveFS) Open(name string) (fs.File, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := l.m.Open(name)
	if err != nil {
		return nil, err
	}
	return &countedFile{File: f, l: l, name: name}, nil
}

// set replaces a file: a new MapFile, so that a file already open keeps the old content.
func (l *liveFS) set(name, content string, mod time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if content == "" {
		delete(l.m, name)
		return
	}
	l.m[name] = &fstest.MapFile{Data: []byte(content), Mode: 0o644, ModTime: mod}
}

func (l *liveFS) bytesRead(name string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.read[name]
}

type countedFile struct {
	fs.File
	l    *liveFS
	name string
}

func (f *countedFile) count(n int) {
	f.l.mu.Lock()
	f.l.read[f.name] += int64(n)
	f.l.mu.Unlock()
}

func (f *countedFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.count(n)
	return n, err
}

func (f *countedFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.(io.ReaderAt).ReadAt(p, off)
	f.count(n)
	return n, err
}

// TestFSHashesOnce: a file without a modification time is hashed by the request that first
// asks for it, on the loop or, for a large file, on a worker; the requests after it read only
// what they send.
func TestFSHashesOnce(t *testing.T) {
	small, large := fsContent(t, "app.js"), string(payload(200<<10, 7))
	live := newLiveFS(fstest.MapFS{})
	live.set("small.js", small, time.Time{})
	live.set("large.bin", large, time.Time{})
	files := body.NewFS(live, body.FSOptions{})
	_, addr := coretest.Serve(t, func(c *core.Ctx) { files.Serve(c, c.Path()) }, core.Options{})
	for name, content := range map[string]string{"small.js": small, "large.bin": large} {
		resp, got := get(t, addr, "GET", "/"+name)
		if resp.StatusCode != 200 || got != content || resp.Header.Get("ETag") != contentETag(content) {
			t.Fatalf("%s: %d, %d bytes, ETag %s", name, resp.StatusCode, len(got), resp.Header.Get("ETag"))
		}
		first := live.bytesRead(name)
		if first != 2*int64(len(content)) {
			t.Errorf("%s: %d bytes read by the first request, want %d (hashed and sent)", name, first, 2*len(content))
		}
		for range 5 {
			if resp, got := get(t, addr, "GET", "/"+name); resp.StatusCode != 200 || got != content ||
				resp.Header.Get("ETag") != contentETag(content) {
				t.Fatalf("%s again: %d, %d bytes", name, resp.StatusCode, len(got))
			}
		}
		if n := live.bytesRead(name) - first; n != 5*int64(len(content)) {
			t.Errorf("%s: %d bytes read by 5 more requests, want %d: hashed again?", name, n, 5*len(content))
		}
	}
}

// TestFSChanges: on an FS that may change, a file changed, removed or replaced is served as it
// now is, with validators to match, whether or not the FS keeps modification times.
func TestFSChanges(t *testing.T) {
	for _, mod := range []time.Time{{}, fileTime} {
		t.Run(fmt.Sprint("modtime=", !mod.IsZero()), func(t *testing.T) {
			live := newLiveFS(fstest.MapFS{})
			live.set("app.js", "version 1", mod)
			live.set("app.js.br", "br 1", mod)
			live.set("app.js.gz", "gz 1", mod)
			live.set("sub/index.html", "index", mod)
			files := body.NewFS(live, body.FSOptions{})
			_, addr := coretest.Serve(t, func(c *core.Ctx) { files.Serve(c, c.Path()) }, core.Options{})
			check := func(what, target, ae string, status int, want, coding string) string {
				t.Helper()
				resp, got := get(t, addr, "GET", target, "Accept-Encoding: "+ae)
				if resp.StatusCode != status || status == 200 && (got != want || resp.Header.Get("Content-Encoding") != coding) {
					t.Errorf("%s: %s %q: %d %q %v, want %d %q %q", what, target, ae, resp.StatusCode, got, resp.Header,
						status, want, coding)
				}
				return resp.Header.Get("ETag")
			}
			v1 := check("first", "/app.js", "", 200, "version 1", "")
			br1 := check("first", "/app.js", "br", 200, "br 1", "br")

			later := mod.Add(time.Hour)
			if mod.IsZero() {
				later = mod // the size tells the change
			}
			live.set("app.js", "version 2, longer", later)
			if v2 := check("changed", "/app.js", "", 200, "version 2, longer", ""); v2 == v1 {
				t.Errorf("changed: the ETag stayed %s", v2)
			}
			live.set("app.js.br", "br 2, longer", later)
			if br2 := check("sibling changed", "/app.js", "br", 200, "br 2, longer", "br"); br2 == br1 {
				t.Errorf("sibling changed: the ETag stayed %s", br2)
			}
			live.set("app.js.br", "", later)
			check("sibling removed", "/app.js", "br, gzip", 200, "gz 1", "gzip")
			check("sibling removed", "/app.js", "br", 200, "version 2, longer", "")
			live.set("app.js.br", "br 3", later)
			check("sibling back, file unchanged", "/app.js", "br", 200, "version 2, longer", "")
			live.set("app.js", "version 3, longer still", later.Add(time.Hour))
			check("sibling back, file changed", "/app.js", "br", 200, "br 3", "br")
			live.set("app.js", "", later)
			check("removed", "/app.js", "", 404, "", "")
			check("removed", "/app.js", "br", 404, "", "")

			check("directory", "/sub/", "", 200, "index", "")
			live.set("sub/index.html", "", later)
			live.set("sub", "now a file", later)
			check("directory become a file", "/sub", "", 200, "now a file", "")
		})
	}
}

// TestFSSpecialFiles: over os.DirFS, a FIFO is answered 404 without being opened (its open
// would block the loop until a writer came), as ServeRoot answers it.
func TestFSSpecialFiles(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	files := body.NewFS(os.DirFS(root), body.FSOptions{})
	_, addr := coretest.Serve(t, func(c *core.Ctx) { files.Serve(c, c.Path()) }, core.Options{})
	if status := fifoStatus(t, addr); status != 404 {
		t.Fatalf("FIFO: %d", status)
	}
}
