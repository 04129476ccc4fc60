package session_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/session"
)

// TestRoundTrip: what Save writes, Load reads back from the cookie the browser returns, among
// other cookies too; the value is not readable in the cookie.
func TestRoundTrip(t *testing.T) {
	cl := serve(t, session.Options{Keys: [][]byte{key(1)}})
	pair := cl.save("ada")
	if !strings.HasPrefix(pair, "session=") || strings.Contains(pair, "ada") {
		t.Fatalf("cookie %q", pair)
	}
	for _, cookies := range []string{pair, "a=1; " + pair + "; b=2"} {
		if got := cl.load(cookies); got != "user ada" {
			t.Errorf("Cookie: %s: %q", cookies, got)
		}
	}
	// Two Saves of the same value seal differently (a fresh nonce each time), and both open.
	if other := cl.save("ada"); other == pair || cl.load(other) != "user ada" {
		t.Errorf("second save %q, first %q", other, pair)
	}
}

// TestNoSession: without the cookie, or with it empty, Load says ErrNoSession and returns the
// zero value.
func TestNoSession(t *testing.T) {
	cl := serve(t, session.Options{Keys: [][]byte{key(1)}})
	for _, cookies := range []string{"", "other=1", "session=", "sessions=abc", `session=""`} {
		if got := cl.load(cookies); !strings.HasPrefix(got, "no session: ") {
			t.Errorf("Cookie %q: %q, want no session", cookies, got)
		}
	}
}

// TestAttributes: the Set-Cookie fields of Save and Clear, with the defaults (Path=/, Max-Age
// and Expires a day on, HttpOnly, Secure, SameSite=Lax) and with every option set.
func TestAttributes(t *testing.T) {
	clk := newClock()
	cases := []struct {
		name        string
		o           session.Options
		save, clear string // the Set-Cookie fields, with V for the value
	}{
		{"defaults", session.Options{Keys: [][]byte{key(1)}},
			"session=V; Path=/; Expires=Thu, 03 Jan 2030 03:04:05 GMT; Max-Age=86400; HttpOnly; Secure; SameSite=Lax",
			"session=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; HttpOnly; Secure; SameSite=Lax"},
		{"all set", session.Options{Keys: [][]byte{key(1)}, Name: "sid", Path: "/app", Domain: "example.com",
			MaxAge: 90 * time.Minute, SameSite: http.SameSiteStrictMode, Insecure: true},
			"sid=V; Path=/app; Domain=example.com; Expires=Wed, 02 Jan 2030 04:34:05 GMT; Max-Age=5400; HttpOnly; SameSite=Strict",
			"sid=; Path=/app; Domain=example.com; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; HttpOnly; SameSite=Strict"},
		{"host prefix, SameSite None", session.Options{Keys: [][]byte{key(1)}, Name: "__Host-s", SameSite: http.SameSiteNoneMode, MaxAge: 1500 * time.Millisecond},
			"__Host-s=V; Path=/; Expires=Wed, 02 Jan 2030 03:04:06 GMT; Max-Age=1; HttpOnly; Secure; SameSite=None",
			"__Host-s=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; HttpOnly; Secure; SameSite=None"},
		{"SameSite default mode", session.Options{Keys: [][]byte{key(1)}, SameSite: http.SameSiteDefaultMode},
			"session=V; Path=/; Expires=Thu, 03 Jan 2030 03:04:05 GMT; Max-Age=86400; HttpOnly; Secure",
			"session=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; HttpOnly; Secure"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cl := serve(t, clk.options(tc.o))
			resp, _ := cl.do("/save?user=ada", "")
			lines := resp.Header.Values("Set-Cookie")
			if len(lines) != 1 {
				t.Fatalf("Set-Cookie %q", lines)
			}
			name, rest, _ := strings.Cut(lines[0], "=")
			value, attrs, _ := strings.Cut(rest, ";")
			if got := name + "=V;" + attrs; got != tc.save {
				t.Errorf("Save: Set-Cookie %q,\nwant %q", got, tc.save)
			}
			if value == "" {
				t.Error("Save: empty value")
			}
			resp, _ = cl.do("/clear", "")
			if lines := resp.Header.Values("Set-Cookie"); len(lines) != 1 || lines[0] != tc.clear {
				t.Errorf("Clear: Set-Cookie %q,\nwant %q", lines, tc.clear)
			}
		})
	}
}

// TestExpiry: a cookie opens until MaxAge has passed by the Store's clock, and is refused
// from then on with ErrExpired — whatever the browser did with its Max-Age.
func TestExpiry(t *testing.T) {
	clk := newClock()
	cl := serve(t, clk.options(session.Options{Keys: [][]byte{key(1)}, MaxAge: time.Hour}))
	pair := cl.save("ada")
	steps := []struct {
		advance time.Duration
		want    string
	}{
		{0, "user ada"},
		{59 * time.Minute, "user ada"},
		{time.Minute - time.Nanosecond, "user ada"},
		{time.Nanosecond, "expired: "},
		{365 * 24 * time.Hour, "expired: "},
	}
	for _, s := range steps {
		clk.advance(s.advance)
		if got := cl.load(pair); !strings.HasPrefix(got, s.want) {
			t.Errorf("at %v: %q, want %q", clk.Now().Sub(start), got, s.want)
		}
	}
	if got := cl.load(pair); !strings.Contains(got, "it expired at 2030-01-02T04:04:05Z") {
		t.Errorf("the error says %q", got)
	}
	// Saving again starts a new hour.
	if got := cl.load(cl.save("ada")); got != "user ada" {
		t.Errorf("after a new save: %q", got)
	}
}

// TestRotation: the first key seals, every key opens: a cookie of the old key opens once the
// new one is put first, a cookie of the new key does not open where only the old one is known,
// and once the old key is dropped its cookies are refused.
func TestRotation(t *testing.T) {
	oldKey, newKey := key(1), key(2)
	before := serve(t, session.Options{Keys: [][]byte{oldKey}})
	during := serve(t, session.Options{Keys: [][]byte{newKey, oldKey}})
	after := serve(t, session.Options{Keys: [][]byte{newKey}})
	oldCookie, newCookie := before.save("ada"), during.save("bob")
	cases := []struct {
		name string
		cl   *client
		pair string
		want string
	}{
		{"old cookie, old key", before, oldCookie, "user ada"},
		{"old cookie, both keys", during, oldCookie, "user ada"},
		{"old cookie, new key", after, oldCookie, "invalid: "},
		{"new cookie, both keys", during, newCookie, "user bob"},
		{"new cookie, new key", after, newCookie, "user bob"},
		{"new cookie, old key", before, newCookie, "invalid: "},
	}
	for _, tc := range cases {
		if got := tc.cl.load(tc.pair); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestOtherName: a value sealed for one cookie name is refused under another, even by a Store
// with the same keys.
func TestOtherName(t *testing.T) {
	a := serve(t, session.Options{Keys: [][]byte{key(1)}, Name: "a"})
	b := serve(t, session.Options{Keys: [][]byte{key(1)}, Name: "b"})
	pair := a.save("ada")
	_, value, _ := strings.Cut(pair, "=")
	if got := b.load("b=" + value); !strings.HasPrefix(got, "invalid: ") || !strings.Contains(got, `cookie "b"`) {
		t.Errorf("moved to b: %q", got)
	}
	if got := a.load("a=" + value); got != "user ada" {
		t.Errorf("under its own name: %q", got)
	}
}

// TestForged: values the Store did not seal are refused with ErrInvalid, never believed and
// never a panic.
func TestForged(t *testing.T) {
	cl := serve(t, session.Options{Keys: [][]byte{key(1)}})
	pair := cl.save("ada")
	_, value, _ := strings.Cut(pair, "=")
	other := serve(t, session.Options{Keys: [][]byte{key(9)}})
	_, otherValue, _ := strings.Cut(other.save("ada"), "=")
	for _, v := range []string{
		"x", "AAAA", "not!base64", value + "=", value[:len(value)-1], value[1:], value + "A",
		strings.Repeat("A", 200), otherValue, strings.Repeat("A", 5000),
	} {
		if got := cl.load("session=" + v); !strings.HasPrefix(got, "invalid: ") {
			t.Errorf("value %.40q: %q, want invalid", v, got)
		}
	}
}

// TestTooLarge: a session whose cookie would pass 4096 bytes, as its Set-Cookie value counts
// them, is refused with ErrTooLarge and nothing is set; the largest that fits is saved and
// loads back.
func TestTooLarge(t *testing.T) {
	cl := serve(t, session.Options{Keys: [][]byte{key(1)}})
	fits := func(n int) (bool, []string) {
		resp, body := cl.do("/save?n="+strconv.Itoa(n), "")
		lines := resp.Header.Values("Set-Cookie")
		switch {
		case resp.StatusCode == 200:
			return true, lines
		case strings.HasPrefix(body, "too large: ") && strings.Contains(body, "over the 4096 browsers keep"):
			if len(lines) != 0 {
				t.Fatalf("too large, yet Set-Cookie %q", lines)
			}
			return false, nil
		}
		t.Fatalf("n=%d: %d %q", n, resp.StatusCode, body)
		return false, nil
	}
	lo, hi := 0, 4096 // fits(lo), !fits(hi)
	if ok, _ := fits(hi); ok {
		t.Fatal("a 4096-byte user fits in the cookie")
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if ok, _ := fits(mid); ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	_, lines := fits(lo)
	if n := len(lines[0]); n > 4096 || n < 4090 {
		t.Errorf("the largest cookie saved is %d bytes", n)
	}
	pair, _, _ := strings.Cut(lines[0], ";")
	if got := cl.load(pair); got != "user "+strings.Repeat("u", lo) {
		t.Errorf("the largest session loads as %.40q", got)
	}
}

// TestNew: options New refuses, each with a message that says what is wrong.
func TestNew(t *testing.T) {
	k := [][]byte{key(1)}
	cases := []struct {
		name string
		o    session.Options
		want string
	}{
		{"no keys", session.Options{}, "Options.Keys is empty"},
		{"empty keys", session.Options{Keys: [][]byte{}}, "Options.Keys is empty"},
		{"short key", session.Options{Keys: [][]byte{make([]byte, 16)}}, "Options.Keys[0] is 16 bytes long; each key must be 32 bytes"},
		{"long key", session.Options{Keys: [][]byte{key(1), make([]byte, 64)}}, "Options.Keys[1] is 64 bytes long"},
		{"nil key", session.Options{Keys: [][]byte{nil}}, "Options.Keys[0] is 0 bytes long"},
		{"zero key", session.Options{Keys: [][]byte{make([]byte, 32)}}, "Options.Keys[0] is all zeros"},
		{"bad name", session.Options{Keys: k, Name: "a b"}, `Options.Name "a b" is not a cookie name`},
		{"bad name char", session.Options{Keys: k, Name: "a;b"}, `Options.Name "a;b" is not a cookie name`},
		{"relative path", session.Options{Keys: k, Path: "app"}, `Options.Path "app" does not start with "/"`},
		{"path with semicolon", session.Options{Keys: k, Path: "/a;b"}, "invalid byte ';' in Cookie.Path"},
		{"bad domain", session.Options{Keys: k, Domain: "exa mple.com"}, "invalid Cookie.Domain"},
		{"negative max age", session.Options{Keys: k, MaxAge: -time.Hour}, "Options.MaxAge -1h0m0s is under a second"},
		{"sub-second max age", session.Options{Keys: k, MaxAge: time.Millisecond}, "Options.MaxAge 1ms is under a second"},
		{"unknown SameSite", session.Options{Keys: k, SameSite: 7}, "Options.SameSite 7 is not one of net/http's SameSite modes"},
		{"None without Secure", session.Options{Keys: k, SameSite: http.SameSiteNoneMode, Insecure: true}, "SameSite=None cookies without Secure"},
		{"__Secure- without Secure", session.Options{Keys: k, Name: "__Secure-s", Insecure: true}, "__Secure- cookies without Secure"},
		{"__Host- without Secure", session.Options{Keys: k, Name: "__Host-s", Insecure: true}, `needs Secure, Path "/" and no Domain`},
		{"__Host- with Path", session.Options{Keys: k, Name: "__Host-s", Path: "/app"}, `needs Secure, Path "/" and no Domain`},
		{"__Host- with Domain", session.Options{Keys: k, Name: "__Host-s", Domain: "example.com"}, `needs Secure, Path "/" and no Domain`},
		// Browsers match the prefixes without regard to case.
		{"__HOST- without Secure", session.Options{Keys: k, Name: "__HOST-s", Insecure: true}, `needs Secure, Path "/" and no Domain`},
		{"__host- with Domain", session.Options{Keys: k, Name: "__host-s", Domain: "example.com"}, `needs Secure, Path "/" and no Domain`},
		{"__SECURE- without Secure", session.Options{Keys: k, Name: "__SECURE-s", Insecure: true}, "__Secure- cookies without Secure"},
	}
	for _, tc := range cases {
		st, err := session.New[Login](tc.o)
		if err == nil || st != nil || !strings.HasPrefix(err.Error(), "session: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, %v; want an error saying %q", tc.name, st, err, tc.want)
		}
	}
	// The keys are copied: the caller may wipe its own.
	mine := key(1)
	cl := serve(t, session.Options{Keys: [][]byte{mine}})
	pair := cl.save("ada")
	clear(mine)
	if got := cl.load(pair); got != "user ada" {
		t.Errorf("after wiping the caller's key: %q", got)
	}
}

// TestSaveNotJSON: a session that does not encode as JSON is an error of Save's, of none of the
// Load kinds, and sets nothing.
func TestSaveNotJSON(t *testing.T) {
	st, err := session.New[func()](session.Options{Keys: [][]byte{key(1)}})
	if err != nil {
		t.Fatal(err)
	}
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		err := st.Save(c, func() {})
		var jerr *json.UnsupportedTypeError
		if !errors.As(err, &jerr) || kind(err) != "other" || !strings.Contains(err.Error(), `cookie "session": the session does not encode as JSON`) {
			c.SetStatus(500)
		}
		fmt.Fprint(c, err)
	}, core.Options{})
	conn := coretest.Dial(t, addr)
	conn.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, body := conn.Response("GET"); resp.StatusCode != 200 || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("%d %q, Set-Cookie %q", resp.StatusCode, body, resp.Header.Get("Set-Cookie"))
	}
}
