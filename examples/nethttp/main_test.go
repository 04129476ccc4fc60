package main

import (
	"bufio"
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

func start(t *testing.T) (base, dir string) {
	t.Helper()
	dir = t.TempDir()
	_, addr := coretest.Serve(t, routes(dir), core.Options{})
	return "http://" + addr, dir
}

func get(t *testing.T, url string, header ...string) (*http.Response, string) {
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
	return resp, string(b)
}

func TestHelloAndEcho(t *testing.T) {
	base, _ := start(t)
	if resp, body := get(t, base+"/std/hello"); body != "Hello World" || resp.ContentLength != 11 {
		t.Errorf("hello: %q, Content-Length %d", body, resp.ContentLength)
	}
	data := strings.Repeat("echo me ", 100000)
	resp, err := http.Post(base+"/std/echo", "application/octet-stream", strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != data || resp.Header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("echo: %d bytes of %d, %v", len(b), len(data), resp.Header)
	}
}

// TestEvents: the five events arrive one by one, in order, each flushed by itself: the
// second no earlier than 100 ms after the first.
func TestEvents(t *testing.T) {
	base, _ := start(t)
	resp, err := http.Get(base + "/std/sse")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	var first time.Time
	for i := 1; i <= 5; i++ {
		line, err := br.ReadString('\n')
		if line != "data: "+string(rune('0'+i))+"\n" {
			t.Fatalf("event %d: %q %v", i, line, err)
		}
		switch i {
		case 1:
			first = time.Now()
		case 2:
			if d := time.Since(first); d < 90*time.Millisecond {
				t.Errorf("second event %v after the first", d)
			}
		}
		br.ReadString('\n')
	}
	if rest, err := io.ReadAll(br); len(rest) != 0 || err != nil {
		t.Errorf("after the events: %q %v", rest, err)
	}
}

// TestWaitCancelled: waits whose clients leave are all counted as cancelled.
func TestWaitCancelled(t *testing.T) {
	base, _ := start(t)
	addr := strings.TrimPrefix(base, "http://")
	const n = 10
	var conns []*coretest.Conn
	for range n {
		c := coretest.Dial(t, addr)
		c.Send("GET /std/wait HTTP/1.1\r\nHost: h\r\n\r\n")
		if resp, err := http.ReadResponse(c.R, nil); err != nil || resp.StatusCode != 200 {
			t.Fatalf("wait: %v %v", resp, err)
		}
		conns = append(conns, c)
	}
	if _, body := get(t, base+"/std/cancelled"); body != "0" {
		t.Fatalf("cancelled before the clients left: %s", body)
	}
	for _, c := range conns {
		c.Close()
	}
	var body string
	for deadline := time.Now().Add(coretest.Patience); body != "10" && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		_, body = get(t, base+"/std/cancelled")
	}
	if body != "10" {
		t.Errorf("cancelled: %s, want 10", body)
	}
}

func TestFiles(t *testing.T) {
	base, dir := start(t)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("0123456789"), 0o644)
	if resp, body := get(t, base+"/std/files/a.txt", "Range", "bytes=2-5"); resp.StatusCode != 206 ||
		body != "2345" || resp.Header.Get("Content-Range") != "bytes 2-5/10" {
		t.Errorf("range: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if resp, body := get(t, base+"/std/files/"); resp.StatusCode != 200 || !strings.Contains(body, "a.txt") {
		t.Errorf("listing: %d %q", resp.StatusCode, body)
	}
	// A symbolic link out of -dir leads nowhere.
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("secret"), 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if resp, body := get(t, base+"/std/files/link"); resp.StatusCode == 200 || strings.Contains(body, "secret") {
		t.Errorf("a link out of -dir: %d %q", resp.StatusCode, body)
	}
}

func TestDebug(t *testing.T) {
	base, _ := start(t)
	if resp, body := get(t, base+"/debug/pprof/"); resp.StatusCode != 200 || !strings.Contains(body, "goroutine") {
		t.Errorf("pprof index: %d", resp.StatusCode)
	}
	if _, body := get(t, base+"/debug/pprof/goroutine?debug=1"); !strings.HasPrefix(body, "goroutine profile:") {
		t.Errorf("goroutine profile: %.40q", body)
	}
	resp, body := get(t, base+"/debug/vars")
	var vars map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &vars); err != nil || vars["memstats"] == nil ||
		resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("vars: %v, %d keys, %v", err, len(vars), resp.Header)
	}
}
