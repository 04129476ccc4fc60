package session_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/router"
	"github.com/dwellhttp/dwell/session"
)

// guarded serves, over one connection, /save?user=U (unguarded: it saves a Login) and every
// other path behind Require with o, whose handler writes the user Load returns; clk is the
// Store's clock.
func guarded(t *testing.T, clk *clock, o session.RequireOptions, co core.Options) (*coretest.Conn, *session.Store[Login]) {
	t.Helper()
	st, err := session.New[Login](clk.options(session.Options{Keys: [][]byte{key(1)}, MaxAge: time.Hour}))
	if err != nil {
		t.Fatal(err)
	}
	inner := session.Require(st, o)(func(c *core.Ctx) {
		if c.Path() == "/late" {
			clk.advance(2 * time.Hour) // past MaxAge: only a Load that opened the cookie again would see it
		}
		v, err := st.Load(c)
		if err != nil {
			t.Errorf("Load behind Require: %v", err)
		}
		c.WriteString("user " + v.User)
	})
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		if c.Path() == "/save" {
			if err := st.Save(c, Login{User: c.Query("user")}); err != nil {
				t.Error(err)
			}
			return
		}
		inner(c)
	}, co)
	return coretest.Dial(t, addr), st
}

// get sends a request with the header lines given and returns the response and its body.
func get(cn *coretest.Conn, method, target string, lines ...string) (*http.Response, string) {
	cn.T.Helper()
	req := method + " " + target + " HTTP/1.1\r\nHost: h\r\n"
	for _, l := range lines {
		req += l + "\r\n"
	}
	cn.Send(req + "\r\n")
	return cn.Response(method)
}

// cookieOf returns the name=value pair of a Save's Set-Cookie, as a browser sends it back.
func cookieOf(t *testing.T, resp *http.Response) string {
	t.Helper()
	lines := resp.Header.Values("Set-Cookie")
	if resp.StatusCode != 200 || len(lines) != 1 {
		t.Fatalf("save: %d, Set-Cookie %q", resp.StatusCode, lines)
	}
	pair, _, _ := strings.Cut(lines[0], ";")
	return pair
}

// TestRequire: a request with a session reaches the handler, whose Load gets what Require
// loaded; one without, with one expired or with one not sealed by the Store, is refused in the
// server's refusal format (JSON here), or its plain text when it has none, and the connection
// goes on.
func TestRequire(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		o                          session.RequireOptions
		co                         core.Options
		status                     int
		ctype, none, expired, text string
	}{
		{"JSON", session.RequireOptions{}, core.Options{WriteRefusal: middleware.JSONRefusal}, 403, "application/json",
			`{"error":"sign in first"}` + "\n", `{"error":"the session has expired: sign in again"}` + "\n", ""},
		{"plain text", session.RequireOptions{}, core.Options{}, 403, "text/plain; charset=utf-8",
			"403 Forbidden: sign in first\n", "403 Forbidden: the session has expired: sign in again\n", ""},
		{"401", session.RequireOptions{Status: 401}, core.Options{WriteRefusal: middleware.JSONRefusal}, 401, "application/json",
			`{"error":"sign in first"}` + "\n", `{"error":"the session has expired: sign in again"}` + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			cn, _ := guarded(t, clk, tc.o, tc.co)
			refused := func(what, want string, lines ...string) {
				t.Helper()
				resp, body := get(cn, "GET", "/account", lines...)
				if resp.StatusCode != tc.status || body != want || resp.Header.Get("Content-Type") != tc.ctype || resp.Close {
					t.Errorf("%s: %d %q %v (close %v), want %d %q", what, resp.StatusCode, body, resp.Header, resp.Close, tc.status, want)
				}
			}
			refused("no cookie", tc.none)
			refused("a cookie not sealed by the Store", tc.none, "Cookie: session=AAAA")

			resp, _ := get(cn, "GET", "/save?user=ada")
			ck := cookieOf(t, resp)
			if resp, body := get(cn, "GET", "/account", "Cookie: "+ck); resp.StatusCode != 200 || body != "user ada" {
				t.Errorf("with the session: %d %q", resp.StatusCode, body)
			}
			if resp, body := get(cn, "GET", "/late", "Cookie: "+ck); resp.StatusCode != 200 || body != "user ada" {
				t.Errorf("the handler's Load opened the cookie again: %d %q", resp.StatusCode, body)
			}
			refused("expired", tc.expired, "Cookie: "+ck) // /late moved the clock on
		})
	}
}

// TestRequireSignIn: with SignIn, a browser navigating to a page is sent to the sign-in page,
// with the target it asked for when Next is set and the target stays on the site; scripts'
// requests and other methods are refused as without it.
func TestRequireSignIn(t *testing.T) {
	const html = "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	for _, tc := range []struct {
		name           string
		o              session.RequireOptions
		method, target string
		lines          []string
		status         int
		loc            string
	}{
		{"page", session.RequireOptions{SignIn: "/login"}, "GET", "/docs?page=2", []string{html}, 303, "/login"},
		{"page with next", session.RequireOptions{SignIn: "/login", Next: "next"}, "GET", "/docs?page=2", []string{html}, 303, "/login?next=%2Fdocs%3Fpage%3D2"},
		{"HEAD", session.RequireOptions{SignIn: "/login", Next: "next"}, "HEAD", "/docs", []string{html}, 303, "/login?next=%2Fdocs"},
		{"sign-in page with a query", session.RequireOptions{SignIn: "https://id.example/login?app=docs#form", Next: "back"}, "GET", "/a%20b",
			[]string{"Accept: Text/HTML; q=1"}, 303, "https://id.example/login?app=docs&back=%2Fa%2520b#form"},
		{"next leaving the site", session.RequireOptions{SignIn: "/login", Next: "next"}, "GET", "//evil.example/x", []string{html}, 303, "/login"},
		{"next leaving the site by a backslash", session.RequireOptions{SignIn: "/login", Next: "next"}, "GET", `/\evil.example/x`, []string{html}, 303, "/login"},
		{"two Accept lines", session.RequireOptions{SignIn: "/login"}, "GET", "/docs", []string{"Accept: image/png", "Accept: text/html"}, 303, "/login"},
		{"a script's fetch", session.RequireOptions{SignIn: "/login"}, "GET", "/docs", []string{"Accept: */*"}, 403, ""},
		{"JSON", session.RequireOptions{SignIn: "/login"}, "GET", "/docs", []string{"Accept: application/json"}, 403, ""},
		{"HTML refused", session.RequireOptions{SignIn: "/login"}, "GET", "/docs", []string{"Accept: application/json, text/html;q=0"}, 403, ""},
		{"no Accept", session.RequireOptions{SignIn: "/login"}, "GET", "/docs", nil, 403, ""},
		{"a form's POST", session.RequireOptions{SignIn: "/login"}, "POST", "/docs", []string{html, "Content-Length: 0"}, 403, ""},
		{"no SignIn", session.RequireOptions{}, "GET", "/docs", []string{html}, 403, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cn, _ := guarded(t, newClock(), tc.o, core.Options{WriteRefusal: middleware.JSONRefusal})
			resp, body := get(cn, tc.method, tc.target, tc.lines...)
			if resp.StatusCode != tc.status || resp.Header.Get("Location") != tc.loc {
				t.Errorf("%d %q, Location %q; want %d %q", resp.StatusCode, body, resp.Header.Get("Location"), tc.status, tc.loc)
			}
			if tc.status == 303 && body != "" {
				t.Errorf("a redirect with a body: %q", body)
			}
		})
	}
}

// TestRequireRefusalErr: a WriteRefusal of the application's tells the cases apart by the
// refusal's Err, which wraps Load's error; the detail of that error stays out of the message.
func TestRequireRefusalErr(t *testing.T) {
	writeRefusal := func(r *core.Refusal) {
		kind := "other"
		for _, k := range []struct {
			err  error
			name string
		}{{session.ErrNoSession, "none"}, {session.ErrInvalid, "invalid"}, {session.ErrExpired, "expired"}} {
			if errors.Is(r.Err, k.err) {
				kind = k.name
			}
		}
		fmt.Fprintf(r, "%s: %s", kind, middleware.RefusalMessage(r))
	}
	clk := newClock()
	cn, _ := guarded(t, clk, session.RequireOptions{}, core.Options{WriteRefusal: writeRefusal})
	resp, _ := get(cn, "GET", "/save?user=ada")
	ck := cookieOf(t, resp)
	for _, tc := range []struct{ cookie, want string }{
		{"", "none: sign in first"},
		{"session=" + strings.Repeat("A", 60), "invalid: sign in first"},
		{ck, "user ada"},
	} {
		var lines []string
		if tc.cookie != "" {
			lines = append(lines, "Cookie: "+tc.cookie)
		}
		if _, body := get(cn, "GET", "/account", lines...); body != tc.want {
			t.Errorf("Cookie %.20q: %q, want %q", tc.cookie, body, tc.want)
		}
	}
	clk.advance(2 * time.Hour)
	if _, body := get(cn, "GET", "/account", "Cookie: "+ck); body != "expired: the session has expired: sign in again" {
		t.Errorf("expired: %q", body)
	}
}

// TestRequireStores: what Require loaded for one Store is not another Store's session.
func TestRequireStores(t *testing.T) {
	a, _ := session.New[Login](session.Options{Keys: [][]byte{key(1)}, Name: "a"})
	b, _ := session.New[Login](session.Options{Keys: [][]byte{key(1)}, Name: "b"})
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		if c.Path() == "/save" {
			a.Save(c, Login{User: "ada"})
			return
		}
		session.Require(a, session.RequireOptions{})(func(c *core.Ctx) {
			va, errA := a.Load(c)
			_, errB := b.Load(c)
			fmt.Fprintf(c, "a %s %v, b %v", va.User, errA, errB)
		})(c)
	}, core.Options{})
	cn := coretest.Dial(t, addr)
	resp, _ := get(cn, "GET", "/save")
	ck := cookieOf(t, resp)
	if _, body := get(cn, "GET", "/x", "Cookie: "+ck); body != "a ada <nil>, b "+session.ErrNoSession.Error() {
		t.Errorf("%q", body)
	}
}

// TestRequireOptions: a status that is no refusal's and a sign-in page that is no URL panic
// when the middleware is made.
func TestRequireOptions(t *testing.T) {
	st, _ := session.New[Login](session.Options{Keys: [][]byte{key(1)}})
	for _, o := range []session.RequireOptions{{Status: 302}, {Status: 200}, {Status: 600}, {SignIn: "http://[::1"}} {
		func() {
			defer func() {
				if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "session.Require") {
					t.Errorf("%+v: panic %v", o, v)
				}
			}()
			session.Require(st, o)
		}()
	}
}

// The routes under /account need a session: a script is refused in JSON, as the server's own
// errors are; a browser going to a page is sent to the sign-in page, which will send it back.
func ExampleRequire() {
	type Login struct {
		User string `json:"user"`
	}
	key := make([]byte, session.KeySize)
	rand.Read(key)
	sessions, err := session.New[Login](session.Options{Keys: [][]byte{key}, Insecure: true}) // Insecure: http:// on the loopback
	if err != nil {
		panic(err)
	}

	r := router.New()
	r.POST("/login", func(c *core.Ctx) {
		sessions.Save(c, Login{User: c.Query("user")}) // a real server checks a password first
	})
	account := r.Group("/account")
	account.Use(session.Require(sessions, session.RequireOptions{SignIn: "/login", Next: "next"}))
	account.GET("/", func(c *core.Ctx) {
		login, _ := sessions.Load(c) // what Require loaded
		c.WriteString("signed in as " + login.User)
	})

	s := core.NewServer(r.Handler(), core.Options{Addr: "127.0.0.1:0", WriteRefusal: middleware.JSONRefusal})
	if err := s.Listen(); err != nil {
		panic(err)
	}
	go s.ListenAndServe()
	defer s.Shutdown(context.Background())
	url := "http://" + s.Addr().String()

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path, accept string) {
		req, _ := http.NewRequest(method, url+path, nil)
		req.Header.Set("Accept", accept)
		resp, err := browser.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%s %s: %s %s%s", method, path, resp.Status, resp.Header.Get("Location"), b)))
	}
	do("GET", "/account/", "application/json")
	do("GET", "/account/?tab=keys", "text/html")
	do("POST", "/login?user=ada", "text/html")
	do("GET", "/account/", "text/html")
	// Output:
	// GET /account/: 403 Forbidden {"error":"sign in first"}
	// GET /account/?tab=keys: 303 See Other /login?next=%2Faccount%2F%3Ftab%3Dkeys
	// POST /login?user=ada: 200 OK
	// GET /account/: 200 OK signed in as ada
}
