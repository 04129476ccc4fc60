package router

import (
	"strings"

	"github.com/julienschmidt/httprouter"
)

// Route conflicts. The routes without parameters live in a table of their own, looked up
// first, so they may sit beside any other route: only the same route twice collides there.
// The routes with parameters live in httprouter's radix tree, which keeps one kind of child per
// position: fixed text, or one named parameter, or a catch-all. A route that needs another kind
// where one is already in the tree makes httprouter panic with a message naming only the new
// route and a piece of the tree. dwell recovers that panic, finds the registered route that
// the new one collides with, and says how to get out.

// conflictMessage explains why rt cannot join the routes registered before it; detail is
// httprouter's panic message, or "" for a route without parameters registered twice.
func (r *Router) conflictMessage(rt *route, detail string) string {
	old := rt
	if detail != "" {
		old = r.conflicting(rt)
	}
	if old == nil {
		return "dwell: route conflict: " + rt.name() + " cannot join the routes with parameters" +
			" registered before it (" + detail + "); " + generic
	}
	return "dwell: route conflict: " + rt.name() + " conflicts with " + old.name() +
		", registered earlier: " + explain(rt.pattern, old.pattern)
}

// conflicting returns the first route with parameters of rt's method key that rt cannot be
// inserted beside, each pair tried in a fresh tree: the conflict is httprouter's own verdict,
// never a guess.
func (r *Router) conflicting(rt *route) *route {
	for _, old := range r.byKey[rt.key] {
		if old.static {
			continue
		}
		var t httprouter.Router
		if insert(&t, old.key, old.pattern, old.handle()) != "" {
			continue
		}
		if insert(&t, rt.key, rt.pattern, rt.handle()) != "" {
			return old
		}
	}
	return nil
}

// explain says why the patterns a (new) and b (registered) collide and what to do about it,
// from the first path segment in which they differ. Both have parameters: a route without
// any collides only with itself.
func explain(a, b string) string {
	if a == b {
		return "the same route is registered twice; remove one of them"
	}
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	i := 0
	for i < len(as) && i < len(bs) && as[i] == bs[i] {
		i++
	}
	if i == len(as) || i == len(bs) {
		return generic
	}
	x, y := as[i], bs[i]
	if mixed(x) || mixed(y) {
		return generic
	}
	at := strings.Join(as[:i], "/") + "/"
	switch kx, ky := segKind(x), segKind(y); {
	case kx == param && ky == param:
		return "the parameters " + x + " and " + y + " sit at the same position (after " + at +
			") under different names; use one name in both routes"
	case kx == catchAll || ky == catchAll:
		c, other := x, b
		if ky == catchAll {
			c, other = y, a
		}
		if other == at {
			return "the catch-all " + c + " matches " + at + " itself (with " + c[1:] + " \"/\");" +
				" drop the route " + at + " and serve it from the catch-all's handler"
		}
		return "the catch-all " + c + " takes every path below " + at + ", where only routes" +
			" without parameters may sit beside it, and " + other + " has " + params(other) +
			"; move " + other + " to a path outside " + at + ", or serve it from the catch-all's" +
			" handler by testing c.Param(\"" + c[1:] + "\")"
	case kx == param && ky == literal || kx == literal && ky == param:
		p, lit, fixed := x, y, b
		if kx == literal {
			p, lit, fixed = y, x, a
		}
		return "the fixed segment \"" + lit + "\" and the parameter " + p + " sit at the same" +
			" position (after " + at + "), which only a route without parameters may do beside" +
			" a parameter, and " + fixed + " has " + params(fixed) + "; give " + fixed +
			" a path that parts from the other before " + at + ", or register only the route" +
			" with " + p + " and branch on c.Param(\"" + p[1:] + "\") == \"" + lit + "\" in its handler"
	}
	return generic
}

const generic = "routes with parameters share httprouter's tree, which holds nothing else where" +
	" one of them has a parameter or catch-all (routes without parameters may sit anywhere);" +
	" give one of them a prefix of its own"

// params names the parameters and catch-all of a pattern: ":id", ":owner and :repo".
func params(pattern string) string {
	var names []string
	for _, t := range parsePattern(pattern) {
		switch t.kind {
		case param:
			names = append(names, ":"+t.text)
		case catchAll:
			names = append(names, "*"+t.text)
		}
	}
	switch n := len(names); n {
	case 0:
		return "no parameters"
	case 1:
		return names[0]
	default:
		return strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	}
}

// segKind classifies a path segment: a parameter, a catch-all, or literal.
func segKind(s string) tokenKind {
	switch {
	case strings.HasPrefix(s, ":"):
		return param
	case strings.HasPrefix(s, "*"):
		return catchAll
	}
	return literal
}

// mixed reports a segment with literal text before a parameter, as in "v:version": too rare a
// shape to advise on beyond the generic message.
func mixed(s string) bool { return segKind(s) == literal && strings.ContainsAny(s, ":*") }
