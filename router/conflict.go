package router

import (
	"strings"

	"github.com/julienschmidt/httprouter"
)

// Route conflicts. httprouter's tree keeps one kind of child per position: fixed text, or one
// named parameter, or a catch-all. A route that needs another kind where one is already in the
// tree makes it panic with a message naming only the new route and a piece of the tree. dwell
// recovers that panic, finds the registered route that the new one collides with, and says how
// to get out.

// conflictMessage explains why rt could not be inserted; detail is httprouter's panic message.
func (r *Router) conflictMessage(rt *route, detail string) string {
	name := rt.method + " " + rt.pattern
	old := r.conflicting(rt)
	if old == nil {
		return "dwell: route conflict: " + name + " cannot join the routes registered before it (" +
			detail + "); httprouter allows nothing else at the position of a parameter or catch-all"
	}
	return "dwell: route conflict: " + name + " conflicts with " + old.method + " " + old.pattern +
		", registered earlier: " + explain(rt.pattern, old.pattern)
}

// conflicting returns the first route of rt's method that rt cannot be inserted beside, each
// pair tried in a fresh tree: the conflict is httprouter's own verdict, never a guess.
func (r *Router) conflicting(rt *route) *route {
	probe := markerFor(rt)
	for _, old := range r.perMeth[rt.method] {
		var t httprouter.Router
		if insert(&t, old.method, old.pattern, probe) != "" {
			continue
		}
		if insert(&t, rt.method, rt.pattern, probe) != "" {
			return old
		}
	}
	return nil
}

// explain says why the patterns a (new) and b (registered) collide and what to do about it,
// from the first path segment in which they differ.
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
		return "the catch-all " + c + " takes every path below " + at + ", so no other route may" +
			" branch there; move " + other + " to a path outside " + at + ", or serve it from the" +
			" catch-all's handler by testing c.Param(\"" + c[1:] + "\")"
	case kx == param && ky == literal || kx == literal && ky == param:
		p, lit, fixed := x, y, b
		if kx == literal {
			p, lit, fixed = y, x, a
		}
		return "httprouter cannot hold the fixed segment \"" + lit + "\" and the parameter " + p +
			" at the same position (after " + at + "); give " + fixed + " a path that parts from" +
			" the other before " + at + ", or register only the route with " + p + " and branch" +
			" on c.Param(\"" + p[1:] + "\") == \"" + lit + "\" in its handler"
	}
	return generic
}

const generic = "httprouter allows no other route where one has a parameter or catch-all;" +
	" give one of them a prefix of its own"

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
