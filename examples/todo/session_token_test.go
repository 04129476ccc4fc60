package main

import (
	"testing"
)

// TestSessionEndsWithItsToken: a session signed in under one token (or on a server that ran
// open) does not write on the server restarted, on the same -dir, with another: changing a
// leaked token ends the sessions it opened.
func TestSessionEndsWithItsToken(t *testing.T) {
	for _, old := range []string{"", "leaked"} {
		dir := t.TempDir()
		url1, _, _ := testApp(t, config{dir: dir, token: old})
		resp, _ := do(t, "POST", url1+"/session", `{"token":"`+old+`"}`, jsonType)
		if old == "" {
			resp, _ = do(t, "POST", url1+"/session", `{"token":"anything at all"}`, jsonType)
		}
		var cookie string
		for _, c := range resp.Cookies() {
			if c.Name == "todo_session" {
				cookie = c.Value
			}
		}
		if cookie == "" {
			t.Fatalf("no session cookie: %d", resp.StatusCode)
		}
		// Started again with a new token, on the same -dir (its session.key).
		url2, _, _ := testApp(t, config{dir: dir, token: "new-token"})
		if r, _ := do(t, "POST", url2+"/todos", `{"title":"x"}`, jsonType); r.StatusCode != 401 {
			t.Fatalf("no credentials: %d", r.StatusCode)
		}
		r, body := do(t, "POST", url2+"/todos", `{"title":"written with an old session"}`, jsonType, "Cookie: todo_session="+cookie)
		if r.StatusCode != 401 {
			t.Errorf("a session signed in under token %q writes after the token became new-token: %d %s", old, r.StatusCode, body)
		}
		// The new token's own sessions do write.
		resp, _ = do(t, "POST", url2+"/session", `{"token":"new-token"}`, jsonType)
		for _, c := range resp.Cookies() {
			if c.Name == "todo_session" {
				cookie = c.Value
			}
		}
		if r, body := do(t, "POST", url2+"/todos", `{"title":"x"}`, jsonType, "Cookie: todo_session="+cookie); r.StatusCode != 201 {
			t.Errorf("a session of the new token: %d %s", r.StatusCode, body)
		}
	}
}
