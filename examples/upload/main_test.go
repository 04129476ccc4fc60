package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

func startStore(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, addr := coretest.Serve(t, s.handler(), core.Options{})
	return "http://" + addr, dir
}

type stored struct {
	ID     string `json:"id"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// upload posts content as curl does, with Expect: 100-continue; chunked hides its length.
func upload(t *testing.T, base string, content []byte, chunked bool) stored {
	t.Helper()
	var r io.Reader = bytes.NewReader(content)
	if chunked {
		r = io.MultiReader(r) // hides the length
	}
	req, _ := http.NewRequest("POST", base+"/files", r)
	req.Header.Set("Expect", "100-continue")
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: 5 * time.Second}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s stored
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != 201 {
		t.Fatalf("%d %v", resp.StatusCode, err)
	}
	sum := sha256.Sum256(content)
	if s.Size != int64(len(content)) || s.SHA256 != hex.EncodeToString(sum[:]) ||
		resp.Header.Get("Location") != "/files/"+s.ID {
		t.Fatalf("stored %+v, Location %q", s, resp.Header.Get("Location"))
	}
	return s
}

func fetch(t *testing.T, url string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestUploadAndDownload(t *testing.T) {
	base, dir := startStore(t)
	content := make([]byte, 3<<20+5)
	for i := range content {
		content[i] = byte(i * 7)
	}
	for _, chunked := range []bool{false, true} {
		s := upload(t, base, content, chunked)
		if b, err := os.ReadFile(filepath.Join(dir, s.ID)); err != nil || !bytes.Equal(b, content) {
			t.Fatalf("stored file: %v", err)
		}
		resp, b := fetch(t, base+"/files/"+s.ID)
		if resp.StatusCode != 200 || !bytes.Equal(b, content) ||
			resp.Header.Get("Content-Type") != "application/octet-stream" {
			t.Fatalf("download: %d, %d bytes, %q", resp.StatusCode, len(b), resp.Header.Get("Content-Type"))
		}
		resp, b = fetch(t, base+"/files/"+s.ID, "Range", "bytes=1000-1999")
		if resp.StatusCode != 206 || !bytes.Equal(b, content[1000:2000]) {
			t.Fatalf("range: %d, %d bytes", resp.StatusCode, len(b))
		}
	}
	// An empty body is a file too.
	upload(t, base, nil, false)
	for _, id := range []string{"00000000-0000-0000-0000-000000000000", "nope", ".upload-x", "..%2f..%2fetc%2fpasswd"} {
		if resp, _ := fetch(t, base+"/files/"+id); resp.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", id, resp.StatusCode)
		}
	}
	if n := len(listDir(t, dir)); n != 3 {
		t.Fatalf("%d files stored, want 3", n)
	}
}

// TestAbortedUploadLeavesNothing: a client that stops mid-body, or a body that breaks its
// framing, leaves no file, partial or temporary.
func TestAbortedUploadLeavesNothing(t *testing.T) {
	base, dir := startStore(t)
	addr := strings.TrimPrefix(base, "http://")
	for _, tc := range []struct{ framing, body string }{
		{"Content-Length: 1000000", strings.Repeat("x", 300_000)}, // then the client leaves
		{"Transfer-Encoding: chunked", "5\r\nhello\r\nzz\r\n"},    // a broken chunk
	} {
		c := coretest.Dial(t, addr)
		// The 100 Continue comes once the handler reads the body, its temporary file made.
		c.Send("POST /files HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n" + tc.framing + "\r\n\r\n")
		if resp, _ := c.Response("POST"); resp.StatusCode != 100 {
			t.Fatalf("%s: status %d, want 100 Continue", tc.framing, resp.StatusCode)
		}
		if names := listDir(t, dir); len(names) != 1 || !strings.HasPrefix(names[0], tempPrefix) {
			t.Fatalf("%s: files while the upload runs: %v", tc.framing, names)
		}
		c.Send(tc.body)
		c.Close()
		coretest.WaitFor(t, tc.framing+": the upload's files removed", func() bool { return len(listDir(t, dir)) == 0 })
	}
}

// TestLeftoversRemovedAtStart: temporary files of a previous run are cleaned up; finished
// uploads are kept.
func TestLeftoversRemovedAtStart(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, tempPrefix+"abc"), []byte("partial"), 0o644)
	os.WriteFile(filepath.Join(dir, "0d2a3f2e-8b5c-4f7e-9a43-6c1f2b3d4e5f"), []byte("done"), 0o644)
	if _, err := openStore(dir); err != nil {
		t.Fatal(err)
	}
	if names := listDir(t, dir); len(names) != 1 || strings.HasPrefix(names[0], tempPrefix) {
		t.Fatalf("%v", names)
	}
}

func listDir(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
