package middleware_test

import (
	"encoding/base64"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
)

// TestBasicAuth: users and passwords compared whole, the user handed to the handler, the
// challenge with its realm and charset.
func TestBasicAuth(t *testing.T) {
	mw := middleware.BasicAuth(middleware.BasicOptions{Users: map[string]string{"alice": "pa:ss", "bob": "hunter2"}, Realm: `ops "east"`})
	_, addr := coretest.Serve(t, mw(func(c *core.Ctx) { c.WriteString("in " + middleware.BasicUser(c)) }), core.Options{})
	basic := func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }
	cases := []struct {
		name, auth string
		status     int
		body       string
	}{
		{"alice", basic("alice:pa:ss"), 200, "in alice"},
		{"bob", basic("bob:hunter2"), 200, "in bob"},
		{"scheme case", "basic " + base64.StdEncoding.EncodeToString([]byte("bob:hunter2")), 200, "in bob"},
		{"wrong password", basic("bob:hunter3"), 401, ""},
		{"other's password", basic("bob:pa:ss"), 401, ""},
		{"unknown user", basic("carol:hunter2"), 401, ""},
		{"no colon", basic("bob"), 401, ""},
		{"not base64", "Basic !!!", 401, ""},
		{"missing", "", 401, ""},
		{"bearer", "Bearer x", 401, ""},
	}
	c := dialRaw(t, addr)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			auth := ""
			if tc.auth != "" {
				auth = "Authorization: " + tc.auth + "\r\n"
			}
			c.Send("GET / HTTP/1.1\r\nHost: h\r\n" + auth + "\r\n")
			resp, body := c.Response("GET")
			if resp.StatusCode != tc.status || tc.status == 200 && body != tc.body {
				t.Fatalf("got %d %q", resp.StatusCode, body)
			}
			if ch := resp.Header.Get("WWW-Authenticate"); tc.status == 401 && ch != `Basic realm="ops \"east\"", charset="UTF-8"` {
				t.Fatalf("challenge %q", ch)
			}
		})
	}
}
