package main

import (
	"strings"
	"testing"
)

// TestAuth: with a token, every write needs it — a missing or wrong one gets 401 with a Bearer
// challenge and changes nothing — and reads do not; the profiler needs it too.
func TestAuth(t *testing.T) {
	url, _, _ := testApp(t, config{token: "s3cret"})
	const auth = "Authorization: Bearer s3cret"
	if resp, _ := do(t, "POST", url+"/todos", `{"title":"a"}`, jsonType, auth); resp.StatusCode != 201 {
		t.Fatalf("setup: %d", resp.StatusCode)
	}
	cases := []struct {
		method, path, body string
		auth               string
		status             int
	}{
		{"GET", "/todos", "", "", 200},
		{"GET", "/todos/1", "", "", 200},
		{"GET", "/todos/changes?timeout=0", "", "", 200},
		{"POST", "/todos", `{"title":"b"}`, "", 401},
		{"POST", "/todos", `{"title":"b"}`, "Authorization: Bearer wrong", 401},
		{"POST", "/todos", `{"title":"b"}`, "Authorization: Basic czNjcmV0", 401},
		{"PUT", "/todos/1", `{"title":"b"}`, "", 401},
		{"DELETE", "/todos/1", "", "", 401},
		{"POST", "/todos/1/attachment", "data", "", 401},
		{"GET", "/debug/pprof/", "", "", 401},
		{"GET", "/debug/pprof/", "", auth, 200},
		{"PUT", "/todos/1", `{"title":"b"}`, auth, 200},
		{"DELETE", "/todos/1", "", auth, 204},
	}
	for _, tc := range cases {
		fields := []string{jsonType}
		if tc.auth != "" {
			fields = append(fields, tc.auth)
		}
		resp, body := do(t, tc.method, url+tc.path, tc.body, fields...)
		if resp.StatusCode != tc.status {
			t.Fatalf("%s %s (%q): %d %q, want %d", tc.method, tc.path, tc.auth, resp.StatusCode, body, tc.status)
		}
		if tc.status == 401 {
			ch := resp.Header.Get("WWW-Authenticate")
			if !strings.HasPrefix(ch, `Bearer realm="todo"`) {
				t.Fatalf("%s %s: challenge %q", tc.method, tc.path, ch)
			}
			errorOf(t, resp, body)
		}
	}
	// The refused writes changed nothing: the one accepted PUT, then the DELETE, did.
	if _, body := do(t, "GET", url+"/todos", ""); body != "[]\n" {
		t.Fatalf("todos: %s", body)
	}
}

// TestOpenWrites: without a token, writes need none.
func TestOpenWrites(t *testing.T) {
	url, _, _ := testApp(t, config{})
	if resp, _ := do(t, "POST", url+"/todos", `{"title":"a"}`, jsonType); resp.StatusCode != 201 {
		t.Fatalf("%d", resp.StatusCode)
	}
}

// TestCORS: a preflight from the -origin gets the allow fields, and from another origin none;
// answers to the origin expose the fields a page needs.
func TestCORS(t *testing.T) {
	url, _, _ := testApp(t, config{origin: "https://app.example", token: "t"})
	preflight := []string{"Access-Control-Request-Method: POST", "Access-Control-Request-Headers: authorization, content-type"}
	resp, _ := do(t, "OPTIONS", url+"/todos", "", append(preflight, "Origin: https://app.example")...)
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight from the origin: %d %q", resp.StatusCode, resp.Header)
	}
	resp, _ = do(t, "OPTIONS", url+"/todos", "", append(preflight, "Origin: https://evil.example")...)
	for k := range resp.Header {
		if strings.HasPrefix(k, "Access-Control-") {
			t.Fatalf("preflight from another origin got %s: %q", k, resp.Header.Get(k))
		}
	}
	resp, _ = do(t, "GET", url+"/todos", "", "Origin: https://app.example")
	if resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "X-Request-Id") ||
		!strings.Contains(strings.Join(resp.Header.Values("Vary"), ", "), "Origin") {
		t.Fatalf("GET from the origin: %q", resp.Header)
	}
	resp, _ = do(t, "GET", url+"/todos", "", "Origin: https://evil.example")
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("GET from another origin: %q", resp.Header)
	}
}

// TestProfiler: net/http/pprof through the bridge.
func TestProfiler(t *testing.T) {
	url, _, _ := testApp(t, config{})
	resp, body := do(t, "GET", url+"/debug/pprof/", "")
	if resp.StatusCode != 200 || !strings.Contains(body, "goroutine") {
		t.Fatalf("index: %d %q", resp.StatusCode, body)
	}
	resp, body = do(t, "GET", url+"/debug/pprof/cmdline", "")
	if resp.StatusCode != 200 || body == "" {
		t.Fatalf("cmdline: %d %q", resp.StatusCode, body)
	}
}
