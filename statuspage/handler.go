package statuspage

import (
	"embed"
	"strconv"
	"strings"
	"time"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
)

// Options configure Handler. The zero value is the defaults.
type Options struct {
	// Interval is the time between the events of a stream, and so how soon the page shows a
	// change: 0 means 500 ms; any other value under 100 ms is taken as 100 ms, since each event
	// copies every loop's counters.
	Interval time.Duration
}

// Limits of Options.Interval.
const (
	defaultInterval = 500 * time.Millisecond
	minInterval     = 100 * time.Millisecond
)

// The page's files.
//
//go:embed assets/page.html assets/app.js assets/style.css
var assetFS embed.FS

// An asset is one of the page's files, with its Content-Type.
type asset struct {
	typ, content string
}

var (
	page   = load("page.html", "text/html; charset=utf-8")
	assets = map[string]asset{
		"app.js":    load("app.js", "text/javascript; charset=utf-8"),
		"style.css": load("style.css", "text/css; charset=utf-8"),
	}
)

// policy is the page's Content-Security-Policy: its script, its style and its stream come from
// its own origin (the handler itself, at ?asset= and the page's path), its icon is inline, and
// nothing else is allowed — no inline script, no frame, no form, no other origin.
const policy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func load(name, typ string) asset {
	b, err := assetFS.ReadFile("assets/" + name)
	if err != nil {
		panic("statuspage: " + err.Error()) // embedded: cannot happen
	}
	return asset{typ, string(b)}
}

// Handler returns a handler serving s's statistics at the path it is mounted on, as the package
// documentation says: the page (HTML, the default), one Snapshot as JSON (Accept:
// application/json or ?format=json), or a stream of them as Server-Sent Events (Accept:
// text/event-stream or ?format=sse), and the page's script and style (?asset=app.js,
// ?asset=style.css). It answers GET and HEAD; other methods get 405. It must not be called
// with a nil s; it may be called before s starts (a snapshot then has no loops).
func Handler(s *core.Server, o Options) core.Handler {
	if s == nil {
		panic("statuspage: Handler needs the server")
	}
	interval := o.Interval
	switch {
	case interval == 0:
		interval = defaultInterval
	case interval < minInterval:
		interval = minInterval
	}
	return func(c *core.Ctx) {
		c.SetHeader("Cache-Control", "no-store")
		c.SetHeader("X-Content-Type-Options", "nosniff")
		if m := c.Method(); m != "GET" && m != "HEAD" {
			c.SetHeader("Allow", "GET, HEAD")
			c.SetStatus(405)
			c.WriteString("method not allowed: the status page answers GET and HEAD\n")
			return
		}
		if name, ok := c.Bytes().Query("asset"); ok {
			serveAsset(c, string(name))
			return
		}
		f, ok := format(c)
		if !ok {
			c.SetStatus(400)
			c.WriteString("format must be html, json or sse\n")
			return
		}
		c.SetHeader("Vary", "Accept")
		switch f {
		case formatJSON:
			sn, err := take(c, s)
			if err != nil {
				return // the client left, or the shutdown's grace ended
			}
			body.WriteJSON(c, 200, &sn)
		case formatSSE:
			stream(c, s, interval)
		default:
			c.SetHeader("Content-Type", page.typ)
			c.SetHeader("Content-Security-Policy", policy)
			c.SetHeader("Referrer-Policy", "no-referrer")
			c.WriteString(page.content)
		}
	}
}

// serveAsset answers with one of the page's files, or 404.
func serveAsset(c *core.Ctx, name string) {
	a, ok := assets[name]
	if !ok {
		c.SetStatus(404)
		c.WriteString("no such asset\n")
		return
	}
	c.SetHeader("Content-Type", a.typ)
	c.WriteString(a.content)
}

// The representations Handler serves.
const (
	formatHTML = iota
	formatJSON
	formatSSE
)

// format returns the representation the request asks for: its format parameter when it has one
// (false when it names none of them), else the one its Accept field prefers — JSON or the
// stream when it names them with a higher quality than text/html, HTML otherwise, wildcards
// included.
func format(c *core.Ctx) (int, bool) {
	if f, ok := c.Bytes().Query("format"); ok {
		switch string(f) {
		case "html":
			return formatHTML, true
		case "json":
			return formatJSON, true
		case "sse":
			return formatSSE, true
		}
		return 0, false
	}
	var html, json, sse float64 // the quality of each, 0 when not named
	for field := range c.Bytes().HeaderValues("Accept") {
		for r := range strings.SplitSeq(string(field), ",") {
			typ, q := mediaRange(r)
			switch typ {
			case "text/html":
				html = max(html, q)
			case "application/json":
				json = max(json, q)
			case "text/event-stream":
				sse = max(sse, q)
			}
		}
	}
	switch {
	case sse > html && sse >= json:
		return formatSSE, true
	case json > html:
		return formatJSON, true
	}
	return formatHTML, true
}

// mediaRange parses one element of an Accept field: its media range, lower-cased, and its
// quality (1 unless a q parameter says otherwise; 0 when that is malformed).
func mediaRange(r string) (string, float64) {
	typ, params, _ := strings.Cut(r, ";")
	q := 1.0
	for p := range strings.SplitSeq(params, ";") {
		name, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(name), "q") {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || f < 0 || f > 1 {
				f = 0
			}
			q = f
		}
	}
	return strings.ToLower(strings.TrimSpace(typ)), q
}
