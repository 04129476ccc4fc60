package body

import (
	"strconv"
	"time"

	"github.com/dwellhttp/dwell/core"
)

// Conditional requests (RFC 9110 §13): the validators of what is served, and the preconditions
// a request can put on them.

// validators are what a client can make a request conditional on: the entity tag and the
// modification time, truncated to the second precision of HTTP dates. Either may be missing.
type validators struct {
	etag    string    // "" when there is none
	modtime time.Time // zero when unknown
}

// httpTime is the IMF-fixdate layout (RFC 9110 §5.6.7), the only one a server sends.
const httpTime = "Mon, 02 Jan 2006 15:04:05 GMT"

// The obsolete layouts a recipient must still accept (RFC 9110 §5.6.7).
const (
	rfc850Time  = "Monday, 02-Jan-06 15:04:05 GMT"
	asctimeTime = "Mon Jan _2 15:04:05 2006"
)

func formatTime(t time.Time) string { return t.UTC().Format(httpTime) }

// parseTime parses an HTTP-date in any of its three forms.
func parseTime(s string) (time.Time, bool) {
	for _, layout := range [...]string{httpTime, rfc850Time, asctimeTime} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// knownTime reports whether t is a real modification time: zero and the Unix epoch both stand
// for "unknown" (the epoch is what some archives and build systems stamp on every file).
func knownTime(t time.Time) bool { return !t.IsZero() && !t.Equal(time.Unix(0, 0)) }

// makeETag derives a strong entity tag from size and modification time. It is strong (byte for
// byte, so usable with If-Range and If-Match) on the grounds that a change that keeps both the
// size and the nanosecond mtime of a file is not a practical case on the file systems served.
func makeETag(modtime time.Time, size int64) string {
	b := make([]byte, 0, 36)
	b = append(b, '"')
	b = strconv.AppendInt(b, modtime.UnixNano(), 36)
	b = append(b, '-')
	b = strconv.AppendInt(b, size, 36)
	b = append(b, '"')
	return string(b)
}

// precondition evaluates the request's preconditions in the order of RFC 9110 §13.2.2 and
// returns 0 to go on, 304 (Not Modified) or 412 (Precondition Failed).
func precondition(c *core.Ctx, v validators) int {
	if present, match := fieldMatch(c, "If-Match", v.etag, true); present {
		if !match {
			return 412
		}
	} else if s := c.Header("If-Unmodified-Since"); s != "" && knownTime(v.modtime) {
		// §13.1.4: ignored when the date does not parse.
		if t, ok := parseTime(s); ok && v.modtime.After(t) {
			return 412
		}
	}
	safe := c.Method() == "GET" || c.Method() == "HEAD"
	if present, match := fieldMatch(c, "If-None-Match", v.etag, false); present {
		if match {
			if safe {
				return 304
			}
			return 412
		}
	} else if s := c.Header("If-Modified-Since"); s != "" && safe && knownTime(v.modtime) {
		// §13.1.3: only for GET and HEAD, only without If-None-Match, ignored when invalid.
		if t, ok := parseTime(s); ok && !v.modtime.After(t) {
			return 304
		}
	}
	return 0
}

// ifRange reports whether a Range header applies (RFC 9110 §13.1.5): always without If-Range;
// with it, only when its validator still matches, compared strongly, else the whole content is
// sent.
func ifRange(c *core.Ctx, v validators) bool {
	ir := c.Header("If-Range")
	if ir == "" {
		return true
	}
	if ir[0] == '"' || len(ir) > 2 && ir[:2] == "W/" {
		tag, weak, rest, ok := nextETag(ir)
		return ok && !weak && trimOWS(rest) == "" && strongMatch(tag, false, v.etag)
	}
	t, ok := parseTime(ir)
	return ok && knownTime(v.modtime) && v.modtime.Equal(t)
}

// fieldMatch reports whether the request has the If-Match or If-None-Match field name, and
// whether its list matches etag (etagListMatch): its field lines are one list (RFC 9110 §5.3).
func fieldMatch(c *core.Ctx, name, etag string, strong bool) (present, match bool) {
	for v := range c.Bytes().HeaderValues(name) {
		present = true
		if etagListMatch(string(v), etag, strong) {
			return true, true
		}
	}
	return present, false
}

// etagListMatch reports whether the If-Match or If-None-Match value list matches etag: "*"
// matches anything that exists, otherwise one of the listed tags must, compared strongly for
// If-Match (§13.1.1) and weakly for If-None-Match (§13.1.2). A malformed list matches no
// further than its last well-formed tag.
func etagListMatch(list, etag string, strong bool) bool {
	if trimOWS(list) == "*" {
		return true
	}
	if etag == "" {
		return false
	}
	for {
		tag, weak, rest, ok := nextETag(list)
		if !ok {
			return false
		}
		if strong && strongMatch(tag, weak, etag) || !strong && weakMatch(tag, etag) {
			return true
		}
		list = rest
	}
}

// nextETag reads the next entity-tag of a comma-separated list (RFC 9110 §8.8.3): tag is the
// opaque-tag with its quotes, weak tells whether it had the W/ prefix.
func nextETag(s string) (tag string, weak bool, rest string, ok bool) {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == ',') {
		s = s[1:]
	}
	if len(s) >= 2 && s[:2] == "W/" {
		weak = true
		s = s[2:]
	}
	if len(s) < 2 || s[0] != '"' {
		return "", false, "", false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return s[:i+1], weak, s[i+1:], true
		case c == 0x21 || c >= 0x23 && c != 0x7f: // etagc
		default:
			return "", false, "", false
		}
	}
	return "", false, "", false
}

// splitETag separates a stored ETag value into its opaque-tag and weakness.
func splitETag(etag string) (tag string, weak bool) {
	if len(etag) > 2 && etag[:2] == "W/" {
		return etag[2:], true
	}
	return etag, false
}

// strongMatch: both tags strong and identical (RFC 9110 §8.8.3.2).
func strongMatch(tag string, weak bool, etag string) bool {
	own, ownWeak := splitETag(etag)
	return !weak && !ownWeak && tag == own
}

// weakMatch: identical opaque-tags, weak or not.
func weakMatch(tag, etag string) bool {
	own, _ := splitETag(etag)
	return tag == own
}

func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
