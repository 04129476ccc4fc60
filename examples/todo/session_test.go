package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestSession: with a token, a browser signs in once and writes with its cookie; a tampered
// cookie, or none, is refused, and signing out ends it.
func TestSession(t *testing.T) {
	url, _, _ := testApp(t, config{token: "s3cret"})
	if resp, body := do(t, "POST", url+"/session", `{"token":"wrong"}`, jsonType); resp.StatusCode != 401 {
		t.Fatalf("a wrong token: %d %q", resp.StatusCode, body)
	}
	resp, body := do(t, "POST", url+"/session", `{"token":"s3cret"}`, jsonType)
	if resp.StatusCode != 204 {
		t.Fatalf("sign-in: %d %q", resp.StatusCode, body)
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "todo_session" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Secure {
		t.Fatalf("the session cookie: %v (plain HTTP: not Secure, or it would never come back)", resp.Header["Set-Cookie"])
	}
	withCookie := "Cookie: todo_session=" + cookie.Value
	if resp, body := do(t, "POST", url+"/todos", `{"title":"a"}`, jsonType, withCookie); resp.StatusCode != 201 {
		t.Fatalf("a write with the session: %d %q", resp.StatusCode, body)
	}
	if _, body := do(t, "GET", url+"/session", "", withCookie); body != `{"signed_in":true}`+"\n" {
		t.Fatalf("GET /session: %q", body)
	}
	// One character changed: refused, as without a cookie.
	v := []byte(cookie.Value)
	v[len(v)/2] ^= 'A' ^ 'B'
	if v[len(v)/2] == cookie.Value[len(v)/2] {
		v[len(v)/2] = 'C'
	}
	for _, f := range []string{"Cookie: todo_session=" + string(v), "Cookie: other=1"} {
		if resp, body := do(t, "POST", url+"/todos", `{"title":"b"}`, jsonType, f); resp.StatusCode != 401 {
			t.Fatalf("%s: %d %q", f, resp.StatusCode, body)
		}
	}
	resp, _ = do(t, "DELETE", url+"/session", "", withCookie)
	if resp.StatusCode != 204 || !strings.Contains(resp.Header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("sign-out: %d %q", resp.StatusCode, resp.Header.Get("Set-Cookie"))
	}
}

// TestCrossOrigin: a browser's write from another site is refused, with a JSON error and
// nothing changed; one from the page's own origin, or from a tool (no Sec-Fetch-Site nor
// Origin), goes through; so does one from -origin.
func TestCrossOrigin(t *testing.T) {
	url, _, _ := testApp(t, config{origin: "https://app.example"})
	host := strings.TrimPrefix(url, "http://")
	for _, tc := range []struct {
		fields []string
		status int
	}{
		{[]string{"Sec-Fetch-Site: cross-site", "Origin: https://evil.example"}, 403},
		{[]string{"Sec-Fetch-Site: same-site", "Origin: http://sub." + host}, 403},
		{[]string{"Origin: https://evil.example"}, 403}, // an older browser: Origin against Host
		{[]string{"Sec-Fetch-Site: same-origin", "Origin: " + url}, 201},
		{[]string{"Origin: " + url}, 201},
		{nil, 201},
		{[]string{"Sec-Fetch-Site: cross-site", "Origin: https://app.example"}, 201},
	} {
		resp, body := do(t, "POST", url+"/todos", `{"title":"x"}`, append(tc.fields, jsonType)...)
		if resp.StatusCode != tc.status {
			t.Errorf("%v: %d %q, want %d", tc.fields, resp.StatusCode, body, tc.status)
		}
		if tc.status == 403 {
			errorOf(t, resp, body)
		}
	}
	if _, body := do(t, "GET", url+"/todos", ""); strings.Count(body, `"id"`) != 4 {
		t.Errorf("the todos: %s; want the 4 allowed", body)
	}
}
