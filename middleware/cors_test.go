package middleware_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
)

// TestCORS: allowed origins get the allow fields, others none; preflights are answered 204 here,
// with the allow fields only when everything asked for is allowed; Vary: Origin always.
func TestCORS(t *testing.T) {
	ran := make(chan string, 1)
	handler := func(c *core.Ctx) {
		select {
		case ran <- c.Method():
		default:
		}
		if c.Path() == "/limit" {
			c.Seam().LimitBody(1)
			c.ReadBody(make([]byte, 4))
			return
		}
		c.WriteString("ok")
	}
	app := middleware.CORSOptions{
		Origins:       []string{"https://app.example"},
		Methods:       []string{"GET", "POST", "DELETE"},
		Headers:       []string{"Content-Type", "Authorization"},
		ExposeHeaders: []string{"X-Request-Id", "Location"},
		MaxAge:        10 * time.Minute,
	}
	open := middleware.CORSOptions{Origins: []string{"*"}, Headers: []string{"*"}}
	brief := middleware.CORSOptions{Origins: []string{"https://app.example"}, MaxAge: 300 * time.Millisecond}
	creds := middleware.CORSOptions{Origins: []string{"https://app.example", "null"}, Credentials: true}
	type want map[string]string // header fields; "" means absent
	noAllow := want{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Methods": "", "Access-Control-Allow-Headers": ""}
	cases := []struct {
		name    string
		o       middleware.CORSOptions
		req     string
		status  int
		handler bool // whether the handler ran
		fields  want
		vary    string
	}{
		{"no origin", app, "GET / HTTP/1.1\r\nHost: h\r\n\r\n", 200, true, noAllow, "Origin"},
		{"allowed", app, "GET / HTTP/1.1\r\nHost: h\r\nOrigin: https://app.example\r\n\r\n", 200, true,
			want{"Access-Control-Allow-Origin": "https://app.example", "Access-Control-Expose-Headers": "X-Request-Id, Location", "Access-Control-Allow-Credentials": ""}, "Origin"},
		{"allowed, other case", app, "GET / HTTP/1.1\r\nHost: h\r\nOrigin: HTTPS://APP.EXAMPLE\r\n\r\n", 200, true,
			want{"Access-Control-Allow-Origin": "HTTPS://APP.EXAMPLE"}, "Origin"},
		{"other origin", app, "GET / HTTP/1.1\r\nHost: h\r\nOrigin: https://evil.example\r\n\r\n", 200, true,
			want{"Access-Control-Allow-Origin": "", "Access-Control-Expose-Headers": ""}, "Origin"},
		{"preflight", app, "OPTIONS /todos HTTP/1.1\r\nHost: h\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: DELETE\r\nAccess-Control-Request-Headers: authorization,content-type\r\n\r\n", 204, false,
			want{"Access-Control-Allow-Origin": "https://app.example", "Access-Control-Allow-Methods": "GET, POST, DELETE",
				"Access-Control-Allow-Headers": "Content-Type, Authorization", "Access-Control-Max-Age": "600"},
			"Origin, Access-Control-Request-Method, Access-Control-Request-Headers"},
		{"preflight kept under a second", brief, "OPTIONS /todos HTTP/1.1\r\nHost: h\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: GET\r\n\r\n", 204, false,
			want{"Access-Control-Allow-Origin": "https://app.example", "Access-Control-Max-Age": "1"},
			"Origin, Access-Control-Request-Method, Access-Control-Request-Headers"},
		{"preflight, other origin", app, "OPTIONS /todos HTTP/1.1\r\nHost: h\r\nOrigin: https://evil.example\r\nAccess-Control-Request-Method: GET\r\n\r\n", 204, false,
			want{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Methods": "", "Access-Control-Allow-Headers": "", "Access-Control-Max-Age": ""},
			"Origin, Access-Control-Request-Method, Access-Control-Request-Headers"},
		{"preflight, method refused", app, "OPTIONS / HTTP/1.1\r\nHost: h\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: PUT\r\n\r\n", 204, false, noAllow, ""},
		{"preflight, header refused", app, "OPTIONS / HTTP/1.1\r\nHost: h\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: x-secret\r\n\r\n", 204, false, noAllow, ""},
		{"plain OPTIONS", app, "OPTIONS / HTTP/1.1\r\nHost: h\r\nOrigin: https://app.example\r\n\r\n", 200, true, want{"Access-Control-Allow-Origin": "https://app.example"}, "Origin"},
		{"any origin", open, "GET / HTTP/1.1\r\nHost: h\r\nOrigin: https://x.example\r\n\r\n", 200, true, want{"Access-Control-Allow-Origin": "*"}, "Origin"},
		{"any header", open, "OPTIONS / HTTP/1.1\r\nHost: h\r\nOrigin: https://x.example\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: x-a, x-b\r\n\r\n", 204, false,
			want{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "x-a, x-b", "Access-Control-Allow-Methods": "GET, HEAD, POST, PUT, PATCH, DELETE", "Access-Control-Max-Age": ""}, ""},
		{"any origin, null", open, "GET / HTTP/1.1\r\nHost: h\r\nOrigin: null\r\n\r\n", 200, true,
			want{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": ""}, "Origin"},
		{"any origin, null preflight", open, "OPTIONS / HTTP/1.1\r\nHost: h\r\nOrigin: null\r\nAccess-Control-Request-Method: GET\r\n\r\n", 204, false,
			want{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": ""}, ""},
		{"any origin, listed one too", middleware.CORSOptions{Origins: []string{"https://app.example", "*"}}, "GET / HTTP/1.1\r\nHost: h\r\nOrigin: https://app.example\r\n\r\n", 200, true,
			want{"Access-Control-Allow-Origin": "*"}, "Origin"},
		{"null not listed", app, "GET / HTTP/1.1\r\nHost: h\r\nOrigin: null\r\n\r\n", 200, true, noAllow, "Origin"},
		{"credentials", creds, "GET / HTTP/1.1\r\nHost: h\r\nOrigin: https://app.example\r\n\r\n", 200, true,
			want{"Access-Control-Allow-Origin": "https://app.example", "Access-Control-Allow-Credentials": "true"}, "Origin"},
		{"credentials, other origin", creds, "GET / HTTP/1.1\r\nHost: h\r\nOrigin: https://evil.example\r\n\r\n", 200, true,
			want{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Credentials": ""}, "Origin"},
		{"credentials, null listed", creds, "GET / HTTP/1.1\r\nHost: h\r\nOrigin: null\r\n\r\n", 200, true,
			want{"Access-Control-Allow-Origin": "null", "Access-Control-Allow-Credentials": "true"}, "Origin"},
		{"credentials, preflight", creds, "OPTIONS / HTTP/1.1\r\nHost: h\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type, x-request-id\r\n\r\n", 204, false,
			want{"Access-Control-Allow-Origin": "https://app.example", "Access-Control-Allow-Credentials": "true", "Access-Control-Allow-Headers": "Content-Type, Authorization, X-Request-Id"}, ""},
		{"credentials, preflight, other origin", creds, "OPTIONS / HTTP/1.1\r\nHost: h\r\nOrigin: https://evil.example\r\nAccess-Control-Request-Method: POST\r\n\r\n", 204, false,
			want{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Credentials": "", "Access-Control-Allow-Methods": ""}, ""},
		{"credentials, any header", middleware.CORSOptions{Origins: []string{"https://app.example"}, Headers: []string{"*"}, Credentials: true},
			"OPTIONS / HTTP/1.1\r\nHost: h\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: x-a\r\n\r\n", 204, false,
			want{"Access-Control-Allow-Origin": "https://app.example", "Access-Control-Allow-Credentials": "true", "Access-Control-Allow-Headers": "x-a"}, ""},
		{"no origins", middleware.CORSOptions{}, "GET / HTTP/1.1\r\nHost: h\r\nOrigin: https://app.example\r\n\r\n", 200, true, noAllow, "Origin"},
		{"server's 413", app, "POST /limit HTTP/1.1\r\nHost: h\r\nOrigin: https://app.example\r\nContent-Length: 4\r\n\r\nabcd", 413, true,
			want{"Access-Control-Allow-Origin": "https://app.example", "Access-Control-Expose-Headers": "X-Request-Id, Location"}, "Origin"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, addr := coretest.Serve(t, middleware.CORS(tc.o)(handler), core.Options{})
			c := dialRaw(t, addr)
			c.Send(tc.req)
			method, _, _ := strings.Cut(tc.req, " ")
			resp, _ := c.Response(method)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			select {
			case m := <-ran:
				if !tc.handler {
					t.Fatalf("the handler ran for %s", m)
				}
			default:
				if tc.handler {
					t.Fatal("the handler did not run")
				}
			}
			for k, v := range tc.fields {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if vary := strings.Join(resp.Header.Values("Vary"), ", "); tc.vary != "" && vary != tc.vary || !strings.Contains(vary, "Origin") {
				t.Errorf("Vary %q, want %q", vary, tc.vary)
			}
		})
	}
}

// TestCORSAnyOriginWithCredentials: "*" with Credentials fails when CORS is built, not on a
// request, with a message that says what to write instead; either alone builds.
func TestCORSAnyOriginWithCredentials(t *testing.T) {
	for _, origins := range [][]string{{"*"}, {"https://app.example", "*"}} {
		msg := catchPanic(func() { middleware.CORS(middleware.CORSOptions{Origins: origins, Credentials: true}) })
		if !strings.Contains(msg, `Origins "*" with Credentials`) || !strings.Contains(msg, "list the origins allowed instead") {
			t.Errorf("Origins %q with Credentials: panic %q", origins, msg)
		}
	}
	for _, o := range []middleware.CORSOptions{
		{Origins: []string{"*"}},
		{Origins: []string{"https://app.example"}, Credentials: true},
		{Credentials: true},
	} {
		if msg := catchPanic(func() { middleware.CORS(o) }); msg != "" {
			t.Errorf("%+v: panic %q", o, msg)
		}
	}
}

// catchPanic returns the message of the panic f raises, or "" when it returns normally.
func catchPanic(f func()) (msg string) {
	defer func() {
		if v := recover(); v != nil {
			msg = fmt.Sprint(v)
		}
	}()
	f()
	return ""
}
