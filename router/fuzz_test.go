package router

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dwellhttp/dwell/core"
	"github.com/julienschmidt/httprouter"
)

// FuzzPattern: checkPattern refuses exactly what httprouter refuses in a tree of its own, the
// tokens of a valid pattern spell it again and match it, and a router holding the pattern
// beside a route of the other kind (with parameters, or without) routes a matching path to it.
func FuzzPattern(f *testing.F) {
	for _, p := range []string{
		"/", "/users/:id", "/files/*path", "/v:ver/x", "/a/:b/c/:d", "users", "/:", "/*",
		"/a/*b/c", "/a*b", "/:a:b", "/:a*b", "/a/:b/", "//", "/*x", "/a:/b",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if strings.Count(p, ":")+strings.Count(p, "*") > 200 {
			return // httprouter counts at most 255 wildcards and reads any beyond as text
		}
		var tree httprouter.Router
		refused := insert(&tree, "GET", p, (&route{}).handle()) != ""
		why := checkPattern(p)
		if refused != (why != "") {
			t.Fatalf("%q: httprouter refused: %v; checkPattern: %q", p, refused, why)
		}
		if why != "" {
			return
		}
		// Spell the pattern again, and a path it matches (every value "V").
		var b, path strings.Builder
		ts := parsePattern(p)
		for _, tk := range ts {
			switch tk.kind {
			case literal:
				b.WriteString(tk.text)
				path.WriteString(tk.text)
			case param:
				b.WriteString(":" + tk.text)
				path.WriteString("V")
			case catchAll:
				b.WriteString("*" + tk.text)
				path.WriteString("V")
			}
		}
		if b.String() != p {
			t.Fatalf("%q: tokens spell %q", p, b.String())
		}
		upper := strings.Map(func(r rune) rune {
			if 'a' <= r && r <= 'z' {
				return r - 'a' + 'A'
			}
			return r
		}, path.String())
		if !utf8.ValidString(path.String()) {
			upper = path.String() // strings.Map would replace the invalid bytes
		}
		if got, ok := matchFold(ts, upper); !ok || got != path.String() {
			t.Fatalf("%q: matchFold(%q) = %q, %v", p, upper, got, ok)
		}
		if m, _, _ := tree.Lookup("GET", path.String()); m == nil {
			t.Fatalf("%q: the tree does not match %q", p, path.String())
		}
		// Beside a route of the other kind, which no path made above can match (a value "V"
		// never makes "/Vother"; a static p is matched before any parameter), and which never
		// conflicts with p: a static route only collides with itself, and the tree holds one route.
		r := New()
		var got string
		r.GET(p, func(*core.Ctx) { got = p })
		other := "/:other"
		if strings.ContainsAny(p, ":*") {
			other = "/Vother"
		}
		if msg := catchPanic(func() { r.GET(other, func(*core.Ctx) { got = other }) }); msg != "" {
			t.Fatalf("%q beside %q: panic %q", other, p, msg)
		}
		r.Handler()
		var c core.Ctx
		if !r.dispatch(&c, "GET", path.String()) || got != p {
			t.Fatalf("%q: the router sends %q to %q", p, path.String(), got)
		}
	})
}
