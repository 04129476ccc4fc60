// Package chatpage is the page of the chat examples (examples/chat, examples/chatcluster): one
// self-contained HTML document, with its style and script, that posts with POST /messages and
// follows the room over a WebSocket (GET /ws), or with long polls on GET /messages when no
// socket gets through (a proxy that does not pass upgrades, a blocked endpoint), keeping its
// cursor across failures and from one way to the other, and starting over when the server's
// history does (its epoch changes, see chatapi): the messages shown stay, above a line that
// says they are no longer on the server, the new history is read from its start, and a message
// the server took that the new history does not have is sent again.
//
// The page shows whether it is connected (live as soon as a request succeeds, retrying within
// seconds after a failure) and how it follows the room (the status line's data-transport,
// "websocket" or "long-poll"), sends one message at a time and keeps any it could not send, with
// a retry, without holding back those typed after it (after a crash, the page sends again as
// soon as the server is back); it refuses blank texts and texts or names over the limits below,
// which the servers that serve it enforce too. Messages are rendered as text, never as HTML,
// with their sender's name and time; the user's own ones (remembered in localStorage, like the
// name) stand apart.
//
// The page is page.html with page.css and page.js put in its place, served with a Content
// Security Policy that allows that style and that script alone.
package chatpage

import (
	"crypto/sha256"
	_ "embed" // the page's files
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/dwellhttp/dwell/core"
)

// The limits of a message, which the page shows and enforces and a server must enforce too.
// Characters are Unicode code points (Go's runes); bytes are those of the text in UTF-8.
const (
	MaxTextChars = 2048
	MaxTextBytes = 4096
	MaxNameChars = 32
)

var (
	//go:embed page.html
	pageHTML string
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
)

// page and policy are the document served and its Content-Security-Policy.
var page, policy = build()

// build fills the limits into the script and puts the style and the script into the page.
func build() (string, string) {
	js := strings.NewReplacer(
		"{{MaxTextChars}}", strconv.Itoa(MaxTextChars),
		"{{MaxTextBytes}}", strconv.Itoa(MaxTextBytes),
		"{{MaxNameChars}}", strconv.Itoa(MaxNameChars),
	).Replace(pageJS)
	doc := strings.NewReplacer("{{style}}", pageCSS, "{{script}}", js).Replace(pageHTML)
	csp := "default-src 'none'; connect-src 'self'; img-src data:; " +
		"style-src '" + hash(pageCSS) + "'; script-src '" + hash(js) + "'; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	return doc, csp
}

// hash is the CSP source that allows an inline element with the given content.
func hash(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// Serve answers GET / with the page.
func Serve(c *core.Ctx) {
	c.SetHeader("Content-Type", "text/html; charset=utf-8")
	c.SetHeader("Content-Security-Policy", policy)
	c.SetHeader("X-Content-Type-Options", "nosniff")
	c.SetHeader("Cache-Control", "no-cache")
	c.WriteString(page)
}
