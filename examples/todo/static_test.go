package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestStaticFiles: each file of static/ has its .gz beside it, which decompresses to the file,
// and index.html names each other file with the start of its SHA-256, so that neither can
// drift from the files: after editing one, this test says what to change.
func TestStaticFiles(t *testing.T) {
	index, err := os.ReadFile("static/index.html")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := fs.ReadDir(static, "static")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".gz") {
			if _, err := os.Stat("static/" + strings.TrimSuffix(name, ".gz")); err != nil {
				t.Errorf("static/%s compresses no file of its own", name)
			}
			continue
		}
		files++
		b, err := os.ReadFile("static/" + name)
		if err != nil {
			t.Fatal(err)
		}
		gz, err := os.ReadFile("static/" + name + ".gz")
		if err != nil || gunzip(t, string(gz)) != string(b) {
			t.Errorf("static/%s.gz is not static/%s compressed (%v): run go generate", name, name, err)
		}
		if name == "index.html" {
			continue
		}
		sum := sha256.Sum256(b)
		want := "/static/" + name + "?v=" + hex.EncodeToString(sum[:])[:12]
		if !strings.Contains(string(index), `"`+want+`"`) {
			t.Errorf("static/index.html does not name %s: write %s, then run go generate", name, want)
		}
	}
	if files != 3 {
		t.Errorf("%d files in static/, want index.html, app.js, app.css", files)
	}
}

// TestPage: the page and its files, in process.
func TestPage(t *testing.T) {
	url, _, _ := testApp(t, config{})
	checkPage(t, url)
}

// TestCommandPage: the page and its files, from the command.
func TestCommandPage(t *testing.T) {
	p := startProcess(t, t.TempDir())
	checkPage(t, "http://"+strings.TrimPrefix(p.line, "listening http://"))
}

// checkPage checks the page at base: GET / and each file it names under /static/ with a strong
// ETag, their Cache-Control (the page revalidated, the files cached for a year), 304 for an
// If-None-Match of the ETag, the gzip file with its own ETag for a client that accepts gzip, and
// the API's JSON 404 for any other name.
func checkPage(t *testing.T, base string) {
	t.Helper()
	index, _ := os.ReadFile("static/index.html")
	files := map[string]string{"/": "index.html"}
	for _, m := range regexp.MustCompile(`"/static/([a-z.]+)\?v=[0-9a-f]+"`).FindAllStringSubmatch(string(index), -1) {
		files[strings.Trim(m[0], `"`)] = m[1]
	}
	if len(files) != 3 {
		t.Fatalf("the page names %v", files)
	}
	for target, name := range files {
		want, _ := os.ReadFile("static/" + name)
		cache, ctype := "public, max-age=31536000, immutable", map[string]string{
			"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}[name]
		if name == "index.html" {
			cache, ctype = "no-cache", "text/html; charset=utf-8"
		}
		resp, body := do(t, "GET", base+target, "")
		etag := resp.Header.Get("ETag")
		if resp.StatusCode != 200 || body != string(want) || resp.Header.Get("Content-Type") != ctype ||
			resp.Header.Get("Cache-Control") != cache || !strings.HasPrefix(etag, `"`) || resp.Header.Get("Content-Encoding") != "" {
			t.Fatalf("GET %s: %d %q (%d bytes, want the %d of %s)", target, resp.StatusCode, resp.Header, len(body), len(want), name)
		}
		if name == "index.html" && !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
			t.Errorf("GET /: Content-Security-Policy %q", resp.Header.Get("Content-Security-Policy"))
		}
		resp, body = do(t, "GET", base+target, "", "If-None-Match: "+etag)
		if resp.StatusCode != 304 || body != "" || resp.Header.Get("ETag") != etag || resp.Header.Get("Cache-Control") != cache {
			t.Fatalf("GET %s, If-None-Match %s: %d %q %q", target, etag, resp.StatusCode, resp.Header, body)
		}

		resp, body = do(t, "GET", base+target, "", "Accept-Encoding: br;q=1, gzip;q=0.8")
		gzEtag := resp.Header.Get("ETag")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || gunzip(t, body) != string(want) ||
			resp.Header.Get("Content-Type") != ctype || resp.Header.Get("Cache-Control") != cache ||
			gzEtag == etag || !strings.HasSuffix(gzEtag, `-gzip"`) || !strings.Contains(strings.Join(resp.Header.Values("Vary"), ","), "Accept-Encoding") {
			t.Fatalf("GET %s, gzip accepted: %d %q", target, resp.StatusCode, resp.Header)
		}
		if resp, _ := do(t, "GET", base+target, "", "Accept-Encoding: gzip", "If-None-Match: "+gzEtag); resp.StatusCode != 304 {
			t.Fatalf("GET %s, gzip accepted, If-None-Match %s: %d", target, gzEtag, resp.StatusCode)
		}
		if resp, _ := do(t, "GET", base+target, "", "Accept-Encoding: gzip;q=0"); resp.Header.Get("Content-Encoding") != "" {
			t.Fatalf("GET %s, gzip refused: %q", target, resp.Header)
		}
		if resp, body := do(t, "HEAD", base+target, ""); resp.StatusCode != 200 || body != "" || resp.Header.Get("ETag") != etag {
			t.Fatalf("HEAD %s: %d %q", target, resp.StatusCode, resp.Header)
		}
	}
	for _, target := range []string{"/static/", "/static/nope.js", "/static/app.js.gz", "/static/index.html", "/static/../main.go", "/nowhere", "/index.html"} {
		resp, body := do(t, "GET", base+target, "")
		if resp.StatusCode != 404 || errorOf(t, resp, body) != "no such resource" {
			t.Errorf("GET %s: %d %q", target, resp.StatusCode, body)
		}
	}
}
