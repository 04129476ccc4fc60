package cookie_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/cookie"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestGet: the cookie named, among several, over one header line or more; quoted values;
// invalid pairs skipped; http.ErrNoCookie when it is not there.
func TestGet(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		ck, err := cookie.Get(c, c.Query("name"))
		if err != nil {
			fmt.Fprint(c, "error: ", errors.Is(err, http.ErrNoCookie))
			return
		}
		fmt.Fprintf(c, "%s=%s quoted=%v", ck.Name, ck.Value, ck.Quoted)
	}, core.Options{})
	cases := []struct {
		name, query, cookies, want string
	}{
		{"one", "session", "Cookie: session=abc\r\n", "session=abc quoted=false"},
		{"among several", "b", "Cookie: a=1; b=2; c=3\r\n", "b=2 quoted=false"},
		{"second line", "b", "Cookie: a=1\r\ncookie: b=2\r\n", "b=2 quoted=false"},
		{"quoted", "q", `Cookie: q="x y"` + "\r\n", "q=x y quoted=true"},
		{"invalid pair skipped", "ok", "Cookie: bad name=1; ok=yes\r\n", "ok=yes quoted=false"},
		{"empty value", "e", "Cookie: e=\r\n", "e= quoted=false"},
		{"absent", "zzz", "Cookie: a=1\r\n", "error: true"},
		{"no header", "a", "", "error: true"},
	}
	c := coretest.Dial(t, addr)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.Send("GET /?name=" + tc.query + " HTTP/1.1\r\nHost: h\r\n" + tc.cookies + "\r\n")
			if _, got := c.Response("GET"); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSet: the attributes as net/http writes them, several cookies side by side, and the
// cookies refused.
func TestSet(t *testing.T) {
	expires := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name string
		ck   *http.Cookie
		want string // the Set-Cookie value, or the error's text
	}{
		{"plain", &http.Cookie{Name: "a", Value: "1"}, "a=1"},
		{"attributes", &http.Cookie{Name: "session", Value: "abc", Path: "/app", Domain: "example.com",
			Expires: expires, MaxAge: 3600, Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode},
			"session=abc; Path=/app; Domain=example.com; Expires=Wed, 02 Jan 2030 03:04:05 GMT; Max-Age=3600; HttpOnly; Secure; SameSite=Lax"},
		{"delete", &http.Cookie{Name: "a", MaxAge: -1}, "a=; Max-Age=0"},
		{"value with space", &http.Cookie{Name: "a", Value: "x y"}, `a="x y"`},
		{"bad name", &http.Cookie{Name: "a b", Value: "1"}, "error: http: invalid Cookie.Name"},
		{"bad value", &http.Cookie{Name: "a", Value: "x;y"}, "error: http: invalid byte"},
		{"bad path", &http.Cookie{Name: "a", Value: "1", Path: "/x;Domain=evil"}, "error: http: invalid byte ';' in Cookie.Path"},
		{"partitioned without secure", &http.Cookie{Name: "a", Value: "1", Partitioned: true}, "error: http: partitioned cookies must be set with Secure"},
	}
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		for _, tc := range cases {
			if tc.name == c.Query("case") {
				if err := cookie.Set(c, tc.ck); err != nil {
					c.WriteString("error: " + err.Error())
				}
				cookie.Set(c, &http.Cookie{Name: "other", Value: "kept"})
			}
		}
	}, core.Options{})
	c := coretest.Dial(t, addr)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.Send("GET /?case=" + strings.ReplaceAll(tc.name, " ", "+") + " HTTP/1.1\r\nHost: h\r\n\r\n")
			resp, got := c.Response("GET")
			set := resp.Header.Values("Set-Cookie")
			if strings.HasPrefix(tc.want, "error: ") {
				if !strings.HasPrefix(got, tc.want) || len(set) != 1 {
					t.Fatalf("got %q, Set-Cookie %q; want %q", got, set, tc.want)
				}
				return
			}
			if len(set) != 2 || set[0] != tc.want || set[1] != "other=kept" {
				t.Fatalf("Set-Cookie %q, want %q", set, tc.want)
			}
		})
	}
}
