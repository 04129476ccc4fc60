package router

import "strings"

// A pattern is a route's path as registered: literal text, parameters (":name", matching one
// path segment up to the next '/') and at most one catch-all ("*name", matching the rest of the
// path, '/' included). The rules are httprouter's; they are checked here first, so that an
// invalid pattern never reaches the tree half inserted.

type tokenKind uint8

const (
	literal  tokenKind = iota // text matched as is (case-insensitively when fixing a path)
	param                     // ":name": one or more bytes up to the next '/'
	catchAll                  // "*name": everything left, possibly nothing
)

type token struct {
	kind tokenKind
	text string // the literal, or the parameter's name
}

// checkPattern returns why p is not a valid pattern, or "".
func checkPattern(p string) string {
	if p == "" || p[0] != '/' {
		return "a pattern must begin with '/'"
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c != ':' && c != '*' {
			continue
		}
		end := i + 1
		for end < len(p) && p[end] != '/' {
			if p[end] == ':' || p[end] == '*' {
				return "a path segment may hold only one parameter or catch-all"
			}
			end++
		}
		if end-i < 2 {
			return "a parameter or catch-all needs a name, as in :id or *path"
		}
		if c == '*' {
			if end != len(p) {
				return "a catch-all (*" + p[i+1:end] + ") must end the pattern"
			}
			if p[i-1] != '/' {
				return "a catch-all (*" + p[i+1:end] + ") must follow a '/'"
			}
		}
		i = end
	}
	return ""
}

// parsePattern splits a valid pattern into tokens.
func parsePattern(p string) []token {
	var ts []token
	for p != "" {
		i := strings.IndexAny(p, ":*")
		switch {
		case i < 0:
			ts = append(ts, token{literal, p})
			p = ""
		case i > 0:
			ts = append(ts, token{literal, p[:i]})
			p = p[i:]
		case p[0] == '*':
			ts = append(ts, token{catchAll, p[1:]})
			p = ""
		default:
			end := strings.IndexByte(p, '/')
			if end < 0 {
				end = len(p)
			}
			ts = append(ts, token{param, p[1:end]})
			p = p[end:]
		}
	}
	return ts
}

// matchFold matches path against the tokens with literals compared case-insensitively, and
// returns the path spelled as the route spells it: the pattern's literals, the request's
// parameter values. This is the case-insensitive half of RedirectFixedPath.
func matchFold(ts []token, path string) (string, bool) {
	b := make([]byte, 0, len(path))
	for _, t := range ts {
		switch t.kind {
		case literal:
			n := len(t.text)
			if len(path) < n || !strings.EqualFold(path[:n], t.text) {
				return "", false
			}
			b = append(b, t.text...)
			path = path[n:]
		case param:
			end := strings.IndexByte(path, '/')
			if end < 0 {
				end = len(path)
			}
			if end == 0 {
				return "", false
			}
			b = append(b, path[:end]...)
			path = path[end:]
		case catchAll:
			b = append(b, path...)
			path = ""
		}
	}
	if path != "" {
		return "", false
	}
	return string(b), true
}
