package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
)

// files lists the directory's files, the database's and the session key aside.
func files(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "todo.db") && e.Name() != "session.key" {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestAttachment: an attachment streamed to disk comes back whole, with its size and SHA-256,
// a Range and an ETag that answers If-None-Match; a new one replaces it and its file; deleting
// the todo deletes the file.
func TestAttachment(t *testing.T) {
	dir := t.TempDir()
	url, _, _ := testApp(t, config{dir: dir})
	do(t, "POST", url+"/todos", `{"title":"a"}`, jsonType)
	do(t, "POST", url+"/todos", `{"title":"b"}`, jsonType)

	data := strings.Repeat("0123456789abcdef", 40000) + "end" // 640 KiB and a bit: several pieces
	sum := sha256.Sum256([]byte(data))
	resp, body := do(t, "POST", url+"/todos/1/attachment", data, "Content-Type: application/octet-stream")
	var stored struct {
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
	}
	if resp.StatusCode != 201 || json.Unmarshal([]byte(body), &stored) != nil || stored.Size != int64(len(data)) || stored.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("upload: %d %q", resp.StatusCode, body)
	}
	if resp.Header.Get("Location") != "/todos/1/attachment" {
		t.Fatalf("Location %q", resp.Header.Get("Location"))
	}

	resp, body = do(t, "GET", url+"/todos/1/attachment", "")
	etag := `"` + stored.SHA256 + `"`
	if resp.StatusCode != 200 || body != data || resp.Header.Get("ETag") != etag || resp.Header.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("download: %d, %d bytes, %q", resp.StatusCode, len(body), resp.Header)
	}
	resp, body = do(t, "GET", url+"/todos/1/attachment", "", "Range: bytes=10-19")
	if resp.StatusCode != 206 || body != "abcdef0123" || resp.Header.Get("Content-Range") != fmt.Sprintf("bytes 10-19/%d", len(data)) {
		t.Fatalf("range: %d %q %q", resp.StatusCode, body, resp.Header.Get("Content-Range"))
	}
	resp, body = do(t, "GET", url+"/todos/1/attachment", "", "If-None-Match: "+etag)
	if resp.StatusCode != 304 || body != "" {
		t.Fatalf("If-None-Match: %d %q", resp.StatusCode, body)
	}
	resp, body = do(t, "GET", url+"/todos/1/attachment", "", "Accept-Encoding: gzip")
	if resp.StatusCode != 200 || body != data || resp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("download with gzip accepted: %d, %d bytes, %q", resp.StatusCode, len(body), resp.Header)
	}

	if got := files(t, dir); len(got) != 1 {
		t.Fatalf("files %q", got)
	}
	first := files(t, dir)[0]
	if resp, body := do(t, "POST", url+"/todos/1/attachment", "v2"); resp.StatusCode != 201 || !strings.Contains(body, `"size":2`) {
		t.Fatalf("replace: %d %q", resp.StatusCode, body)
	}
	if got := files(t, dir); len(got) != 1 || got[0] == first {
		t.Fatalf("after the replacement, files %q (the first was %s)", got, first)
	}
	if _, body := do(t, "GET", url+"/todos/1/attachment", ""); body != "v2" {
		t.Fatalf("replaced attachment: %q", body)
	}
	do(t, "DELETE", url+"/todos/1", "")
	if got := files(t, dir); len(got) != 0 {
		t.Fatalf("after the delete, files %q", got)
	}

	for _, tc := range []struct {
		method, path, body string
		want               string
	}{
		{"GET", "/todos/1/attachment", "", "no todo 1"},
		{"POST", "/todos/1/attachment", "x", "no todo 1"},
		{"GET", "/todos/2/attachment", "", "todo 2 has no attachment"},
		{"GET", "/todos/zz/attachment", "", `no todo "zz"`},
	} {
		resp, body := do(t, tc.method, url+tc.path, tc.body)
		if resp.StatusCode != 404 || errorOf(t, resp, body) != tc.want {
			t.Fatalf("%s %s: %d %q", tc.method, tc.path, resp.StatusCode, body)
		}
	}
}

// TestAttachmentCutShort: an upload the client abandons mid-body is never stored: no
// attachment, no file, not even a temporary one.
func TestAttachmentCutShort(t *testing.T) {
	dir := t.TempDir()
	addr, _, logs := testAppTCP(t, config{dir: dir})
	url := "http://" + addr
	do(t, "POST", url+"/todos", `{"title":"a"}`, jsonType)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST /todos/1/attachment HTTP/1.1\r\nHost: h\r\nContent-Length: 1000000\r\n\r\n%s", strings.Repeat("x", 300000))
	c.(*net.TCPConn).CloseWrite()
	// The access log line comes once the handler is done, temporary file removed.
	if m := logs.next(t, "/todos/1/attachment"); m["error"] == nil {
		t.Fatalf("logged %v", m)
	}
	c.Close()
	if got := files(t, dir); len(got) != 0 {
		t.Fatalf("files %q", got)
	}
	if resp, body := do(t, "GET", url+"/todos/1/attachment", ""); resp.StatusCode != 404 {
		t.Fatalf("attachment after a cut upload: %d %q", resp.StatusCode, body)
	}
}
