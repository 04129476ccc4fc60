package router

import (
	"os"
	"path/filepath"
	"testing"
)

func TestServeFiles(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "public")
	os.MkdirAll(filepath.Join(root, "css"), 0o755)
	os.WriteFile(filepath.Join(root, "css", "site.css"), []byte("h1{}"), 0o644)
	os.WriteFile(filepath.Join(parent, "secret"), []byte("SECRET"), 0o644)
	r := New()
	r.ServeFiles("/static/*filepath", root)
	c := dial(t, serve(t, r))
	for _, tt := range []struct {
		method, target string
		status         int
		body           string
	}{
		{"GET", "/static/css/site.css", 200, "h1{}"},
		{"HEAD", "/static/css/site.css", 200, ""},
		{"GET", "/static/missing.css", 404, ""},
		{"GET", "/static/../secret", 0, ""},
		{"GET", "/static/%2e%2e/secret", 0, ""},
		{"GET", "/static/..%2fsecret", 0, ""},
		{"GET", "/static/css%2f..%2f..%2fsecret", 0, ""},
		{"POST", "/static/css/site.css", 405, ""},
	} {
		resp, body := c.do(tt.method, tt.target)
		switch {
		case tt.status == 0: // refused, one way or another, and never the secret
			if resp.StatusCode < 300 || body == "SECRET" {
				t.Errorf("%s %s: %d %q", tt.method, tt.target, resp.StatusCode, body)
			}
		case resp.StatusCode != tt.status || tt.body != "" && body != tt.body:
			t.Errorf("%s %s: %d %q, want %d %q", tt.method, tt.target, resp.StatusCode, body, tt.status, tt.body)
		}
		if resp.Close {
			c = dial(t, serve(t, r))
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("ServeFiles accepted a pattern without /*filepath")
		}
	}()
	New().ServeFiles("/static/", root)
}
