package session_test

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/session"
)

// Login is the session of the tests.
type Login struct {
	User  string `json:"user"`
	Admin bool   `json:"admin,omitempty"`
}

// key returns a test key: 32 bytes of b.
func key(b byte) []byte { return bytes.Repeat([]byte{b}, session.KeySize) }

// start is the moment the tests' clocks start at.
var start = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// A clock is a time the test sets and the server's loops read.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := new(clock)
	c.set(start)
	return c
}

func (c *clock) set(t time.Time)                           { c.ns.Store(t.UnixNano()) }
func (c *clock) advance(d time.Duration)                   { c.ns.Add(int64(d)) }
func (c *clock) Now() time.Time                            { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) options(o session.Options) session.Options { o.Now = c.Now; return o }

// A client talks to a server of one Store over one connection: /save?user=U saves a Login
// (with a name of n bytes given n=), /load writes the user or the kind of error, /clear clears.
type client struct {
	t    *testing.T
	conn *coretest.Conn
}

// serve serves a Store made from o and returns a client for it.
func serve(t *testing.T, o session.Options) *client {
	t.Helper()
	st, err := session.New[Login](o)
	if err != nil {
		t.Fatal(err)
	}
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		switch c.Path() {
		case "/save":
			user := c.Query("user")
			if n, err := strconv.Atoi(c.Query("n")); err == nil {
				user = strings.Repeat("u", n)
			}
			if err := st.Save(c, Login{User: user}); err != nil {
				c.SetStatus(500)
				c.WriteString(kind(err) + ": " + err.Error())
			}
		case "/load":
			v, err := st.Load(c)
			if err != nil {
				if v != (Login{}) {
					c.WriteString("a value with the error: ")
				}
				c.WriteString(kind(err) + ": " + err.Error())
				return
			}
			c.WriteString("user " + v.User)
		case "/clear":
			st.Clear(c)
		}
	}, core.Options{})
	return &client{t, coretest.Dial(t, addr)}
}

// kind names the sentinel error err wraps.
func kind(err error) string {
	for _, k := range []struct {
		err  error
		name string
	}{{session.ErrNoSession, "no session"}, {session.ErrInvalid, "invalid"}, {session.ErrExpired, "expired"}, {session.ErrTooLarge, "too large"}} {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return "other"
}

// do sends a GET for target with the Cookie field given (none when empty) and returns the
// response and its body.
func (cl *client) do(target, cookies string) (*http.Response, string) {
	cl.t.Helper()
	req := "GET " + target + " HTTP/1.1\r\nHost: h\r\n"
	if cookies != "" {
		req += "Cookie: " + cookies + "\r\n"
	}
	cl.conn.Send(req + "\r\n")
	return cl.conn.Response("GET")
}

// save saves a Login for user and returns the cookie's name=value pair, as a browser sends it
// back.
func (cl *client) save(user string) string {
	cl.t.Helper()
	resp, body := cl.do("/save?user="+user, "")
	lines := resp.Header.Values("Set-Cookie")
	if resp.StatusCode != 200 || len(lines) != 1 {
		cl.t.Fatalf("save: %d %q, Set-Cookie %q", resp.StatusCode, body, lines)
	}
	pair, _, _ := strings.Cut(lines[0], ";")
	return pair
}

// load returns what /load answers for the Cookie field given.
func (cl *client) load(cookies string) string {
	cl.t.Helper()
	_, body := cl.do("/load", cookies)
	return body
}
