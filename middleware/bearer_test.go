package middleware_test

import (
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
)

type userKey struct{}

// TestBearerAuth: the token accepted, in any case of the scheme; a missing or malformed one
// refused without an error code, a wrong one with error="invalid_token"; a Valid function that
// hands the handler a user.
func TestBearerAuth(t *testing.T) {
	secret := middleware.BearerAuth(middleware.BearerOptions{Token: "s3cret-token", Realm: "todo", Error: middleware.JSONError})
	lookup := middleware.BearerAuth(middleware.BearerOptions{Valid: func(c *core.Ctx, token string) bool {
		if token == "alice-token" {
			c.SetValue(userKey{}, "alice")
			return true
		}
		return false
	}})
	handler := func(c *core.Ctx) {
		u, _ := c.Value(userKey{}).(string)
		c.WriteString("in " + u)
	}
	cases := []struct {
		name      string
		mw        func(core.Handler) core.Handler
		auth      string
		status    int
		challenge string
		body      string
	}{
		{"token", secret, "Bearer s3cret-token", 200, "", "in "},
		{"scheme in lower case", secret, "bearer s3cret-token", 200, "", "in "},
		{"spaces", secret, "Bearer   s3cret-token", 200, "", "in "},
		{"missing", secret, "", 401, `Bearer realm="todo"`, `{"error":"a bearer token is required"}` + "\n"},
		{"other scheme", secret, "Basic czNjcmV0LXRva2Vu", 401, `Bearer realm="todo"`, ""},
		{"empty token", secret, "Bearer ", 401, `Bearer realm="todo"`, ""},
		{"wrong", secret, "Bearer s3cret-tokeN", 401, `Bearer realm="todo", error="invalid_token"`, `{"error":"the bearer token is not valid"}` + "\n"},
		{"prefix", secret, "Bearer s3cret", 401, `Bearer realm="todo", error="invalid_token"`, ""},
		{"longer", secret, "Bearer s3cret-token-and-more", 401, `Bearer realm="todo", error="invalid_token"`, ""},
		{"valid func", lookup, "Bearer alice-token", 200, "", "in alice"},
		{"valid func refuses", lookup, "Bearer bob-token", 401, `Bearer error="invalid_token"`, "401 Unauthorized: the bearer token is not valid\n"},
		{"no realm", lookup, "", 401, `Bearer`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, addr := coretest.Serve(t, tc.mw(handler), core.Options{})
			c := dialRaw(t, addr)
			auth := ""
			if tc.auth != "" {
				auth = "Authorization: " + tc.auth + "\r\n"
			}
			c.Send("GET / HTTP/1.1\r\nHost: h\r\n" + auth + "\r\n")
			resp, body := c.Response("GET")
			if resp.StatusCode != tc.status || resp.Header.Get("WWW-Authenticate") != tc.challenge || tc.body != "" && body != tc.body {
				t.Fatalf("got %d %q %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
			}
		})
	}
	defer func() {
		if recover() == nil {
			t.Fatal("BearerAuth without a token did not panic")
		}
	}()
	middleware.BearerAuth(middleware.BearerOptions{})
}
