package websocket

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"path"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/alias"
	"github.com/dwellhttp/dwell/internal/syntax"
	"github.com/dwellhttp/dwell/websocket/internal/deflate"
)

// The opening handshake (RFC 6455 §4.2): the request is checked, the answer to a refused one
// is an ordinary HTTP response saying why, and an accepted one is answered with 101 and its
// connection handed over from HTTP (core.Ctx.HandOver) to the Conn.

// Events are the event style's callbacks (Serve). They run on the connection's loop, one at a
// time, and must not block: what takes time goes to another goroutine (wait.Do's pool, say),
// which may then send with the connection's Remote, taken in the callback. Every field may be
// nil. One Events may serve every connection.
type Events struct {
	// Open is called once the connection is upgraded, before any message: in Serve, before it
	// returns.
	Open func(c *Conn)
	// Message is called with each message received, whole — reassembled from its fragments,
	// inflated, its text checked. data is lent for the call: it is the loop's read buffer or
	// the connection's, reused after Message returns, so copy what must be kept.
	Message func(c *Conn, typ MessageType, data []byte)
	// Close is called once the connection has closed, with why: a *CloseError for a close
	// frame (the client's, or this side's), ErrPongTimeout, core.ErrClosed for a client that
	// vanished, core.ErrShutdown at the end of a shutdown's grace period.
	Close func(c *Conn, err error)
	// Drained is called when the output that made a Send answer SendBackpressure has gone
	// down to half the server's WriteHighWater: the sender that held back may go on.
	Drained func(c *Conn)
}

// A HandshakeError is an upgrade refused: the HTTP status it was answered with, and why.
type HandshakeError struct {
	Status int
	Reason string
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("websocket: upgrade refused with %d: %s", e.Status, e.Reason)
}

// Accept upgrades the request to a WebSocket connection in the sequential style: the handler
// goes on with the connection, reading (ReadMessage, NextReader) and writing (WriteMessage,
// NextWriter) with calls that park the handler alone while they wait. Its Remote may be given
// to other goroutines, and the connection outlives the handler: it lasts until one side closes it
// (Close), its client vanishes or stops answering pings. A refused upgrade has been answered
// (see the package doc) and returns a *HandshakeError. Call Accept from the handler, before
// anything of the response is written; o may be nil.
func Accept(cx *core.Ctx, o *Options) (*Conn, error) {
	// The handshake runs on the loop's stack, not the handler's: it needs more stack than a
	// fresh coroutine has, and a handler that then parks for the connection's life would
	// keep its stack grown, 2 KiB more per connection (see core/internal/serve/loopstack.go).
	a := acceptCall{cx: cx, o: o}
	cx.Seam().OnLoopStack(acceptOnLoop, &a, nil, 0)
	c, err := a.c, a.err
	if err != nil {
		return nil, err
	}
	c.seq = &seqSide{cx: cx}
	return c, nil
}

// acceptCall is Accept's upgrade, run on the loop's stack (acceptOnLoop).
type acceptCall struct {
	cx  *core.Ctx
	o   *Options
	c   *Conn
	err error
}

func acceptOnLoop(p any, _ []byte, _ int) int {
	a := p.(*acceptCall)
	a.c, a.err = upgrade(a.cx, a.o, nil)
	return 0
}

// Serve upgrades the request to a WebSocket connection in the event style: ev's functions run
// on the loop as things happen (Open before Serve returns, then Message and Close), and the
// handler should return right after Serve, so that the connection, while it waits for its next
// message, holds no coroutine, no goroutine and no buffer. A refused upgrade has been answered
// and returns a *HandshakeError. Call Serve from the handler, before anything of the response
// is written; o may be nil, ev must not be.
func Serve(cx *core.Ctx, o *Options, ev *Events) (*Conn, error) {
	c, err := upgrade(cx, o, ev)
	if err != nil {
		return nil, err
	}
	if ev.Open != nil {
		c.event(func() { ev.Open(c) })
	}
	return c, nil
}

// defaultOptions are a nil *Options'.
var defaultOptions Options

// upgrade checks the handshake and either refuses it or answers it and hands the connection
// over.
func upgrade(cx *core.Ctx, o *Options, ev *Events) (*Conn, error) {
	if o == nil {
		o = &defaultOptions
	}
	var h handshake
	if status, reason := h.check(cx, o); status != 0 {
		return nil, refuse(cx, status, reason)
	}
	c := &Conn{o: o, ev: ev, sub: int8(h.sub)}
	if h.sub >= 0 {
		cx.SetHeader("Sec-WebSocket-Protocol", o.Subprotocols[h.sub])
	}
	if o.Compress && h.extensions > 0 {
		p, response, ok, err := h.negotiate(cx, o.ContextTakeover)
		if err != nil {
			return nil, refuse(cx, 400, "malformed Sec-WebSocket-Extensions")
		}
		if ok {
			c.flate = newFlateState(p)
			cx.SetHeader("Sec-WebSocket-Extensions", response)
		}
	}
	if h.tunnel {
		cx.SetStatus(200) // RFC 8441 §5: the stream is the connection; no key to answer
	} else {
		cx.SetStatus(101)
		cx.SetHeader("Upgrade", "websocket")
		cx.SetHeader("Sec-WebSocket-Accept", acceptKey(h.key))
	}
	hc, err := cx.HandOver((*protocol)(c))
	if err != nil {
		return nil, err
	}
	c.hc = hc
	c.startTimers()
	return c, nil
}

// refuse answers a refused upgrade, if nothing was answered yet, and returns its error.
func refuse(cx *core.Ctx, status int, reason string) error {
	if !cx.ResponseStarted() {
		cx.SetStatus(status)
		switch status {
		case 405:
			cx.SetHeader("Allow", "GET")
		case 426:
			cx.SetHeader("Upgrade", "websocket")
			cx.SetHeader("Sec-WebSocket-Version", "13") // §4.2.2: the version the server speaks
		}
		cx.SetHeader("Content-Type", "text/plain; charset=utf-8")
		cx.WriteString("websocket: " + reason + "\n")
	}
	return &HandshakeError{Status: status, Reason: reason}
}

// A handshake is what the opening handshake's header fields say (RFC 6455 §4.2.1), gathered
// in one pass over them without copies: the fields are the request's, borrowed for the
// handshake.
type handshake struct {
	tunnel              bool   // an HTTP/2 extended CONNECT (RFC 8441): the stream is the connection
	upgrade, connection bool   // Upgrade has websocket, Connection has upgrade
	versions, keys      int    // how many Sec-WebSocket-Version and -Key fields
	version, key        []byte // the last of each
	origin              []byte
	sub                 int // the chosen subprotocol's index in Options.Subprotocols, or -1
	// extensions counts the Sec-WebSocket-Extensions field lines; ext holds the first ones,
	// more than clients send (browsers send one line), so that permessage-deflate is
	// negotiated without copies of them.
	extensions int
	ext        [4][]byte
}

// check checks a client's opening handshake and returns the status and reason of a refusal,
// or 0. Over HTTP/2 the handshake is an extended CONNECT (RFC 8441 §5), served as a GET: no
// Upgrade, Connection or key (the stream is the connection, opened for WebSocket alone), the
// rest as over HTTP/1.1.
func (h *handshake) check(cx *core.Ctx, o *Options) (status int, reason string) {
	h.sub = -1
	h.tunnel = cx.Seam().ConnectProtocol() == "websocket"
	for name, value := range cx.Bytes().Headers() {
		switch {
		case syntax.EqualFold(name, "Upgrade"):
			h.upgrade = h.upgrade || hasToken(value, "websocket")
		case syntax.EqualFold(name, "Connection"):
			h.connection = h.connection || hasToken(value, "upgrade")
		case syntax.EqualFold(name, "Sec-WebSocket-Version"):
			h.versions++
			h.version = value
		case syntax.EqualFold(name, "Sec-WebSocket-Key"):
			h.keys++
			h.key = value
		case syntax.EqualFold(name, "Origin"):
			h.origin = value
		case syntax.EqualFold(name, "Sec-WebSocket-Protocol"):
			h.sub = chooseSubprotocol(value, o.Subprotocols, h.sub)
		case syntax.EqualFold(name, "Sec-WebSocket-Extensions"):
			if h.extensions < len(h.ext) {
				h.ext[h.extensions] = value
			}
			h.extensions++
		}
	}
	switch {
	case cx.Method() != "GET":
		return 405, "an upgrade is a GET"
	case h.tunnel:
	case cx.Proto() != "HTTP/1.1":
		return 400, "an upgrade needs HTTP/1.1, or HTTP/2's extended CONNECT"
	case !h.upgrade:
		return 426, "the request has no Upgrade: websocket"
	case !h.connection:
		return 400, "the request has no Connection: upgrade"
	}
	switch {
	case h.versions != 1 || string(h.version) != "13":
		return 426, "the server speaks WebSocket version 13"
	case h.tunnel:
	case cx.ContentLength() > 0 || cx.Seam().Chunked():
		return 400, "an upgrade request has no body"
	case h.keys != 1 || !validKey(h.key):
		return 400, "Sec-WebSocket-Key is not one base64 encoding of 16 bytes"
	}
	if host, _ := cx.Bytes().Header("Host"); !originAllowed(h.origin, host, o.Origins) {
		return 403, "origin not allowed"
	}
	return 0, ""
}

// negotiate negotiates permessage-deflate (RFC 7692) from the Sec-WebSocket-Extensions lines
// check gathered, or from copies of them when there are more lines than it keeps.
//
// The borrowed lines are lent to deflate.Negotiate as strings over the request's bytes, with no
// copy (alias.String). A string's bytes must not change while it lives, and these do not: the
// request's bytes stay as they are until the handler returns (core.RequestBytes' contract), and the
// handshake runs within the handler; Negotiate keeps nothing of its arguments past the call, nor
// returns anything that refers to them, so the strings are gone when it returns.
func (h *handshake) negotiate(cx *core.Ctx, allowContextTakeover bool) (deflate.Params, string, bool, error) {
	if h.extensions > len(h.ext) {
		var lines []string // rare: copies
		for v := range cx.Bytes().HeaderValues("Sec-WebSocket-Extensions") {
			lines = append(lines, string(v))
		}
		return deflate.Negotiate(lines, allowContextTakeover)
	}
	var lines [len(h.ext)]string
	for i, b := range h.ext[:h.extensions] {
		lines[i] = alias.String(b)
	}
	return deflate.Negotiate(lines[:h.extensions], allowContextTakeover)
}

// validKey reports whether k is a base64 encoding of 16 bytes (§4.1: "a randomly selected
// 16-byte value that has been base64-encoded").
func validKey(k []byte) bool {
	var b [18]byte
	n, err := base64.StdEncoding.Decode(b[:], k)
	return len(k) == 24 && err == nil && n == 16
}

// acceptGUID is what §1.3 appends to the key before hashing it.
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// acceptKey returns the Sec-WebSocket-Accept of a valid Sec-WebSocket-Key (§4.2.2).
func acceptKey(key []byte) string {
	var in [24 + len(acceptGUID)]byte
	copy(in[copy(in[:], key):], acceptGUID)
	sum := sha1.Sum(in[:])
	var out [28]byte
	base64.StdEncoding.Encode(out[:], sum[:])
	return string(out[:])
}

// hasToken reports whether the comma-separated list v holds token, case-insensitively.
func hasToken(v []byte, token string) bool {
	for t := range bytes.SplitSeq(v, []byte(",")) {
		if syntax.EqualFold(bytes.Trim(t, " \t"), token) {
			return true
		}
	}
	return false
}

// chooseSubprotocol returns the index in supported of the subprotocol to speak after the
// offers of the comma-separated list v, best the index of the best one chosen so far (-1 for
// none): the server's order of preference decides. Subprotocol names are case-sensitive
// (§4.1).
func chooseSubprotocol(v []byte, supported []string, best int) int {
	for t := range bytes.SplitSeq(v, []byte(",")) {
		t = bytes.Trim(t, " \t")
		for i, s := range supported[:min(len(supported), 127)] {
			if string(t) == s && (best < 0 || i < best) {
				best = i
			}
		}
	}
	return best
}

// originAllowed reports whether a request with the Origin origin and the Host host may open a
// connection: one with no origin (not from a browser), one from its own host, or one whose
// host matches a pattern of allowed.
func originAllowed(origin, host []byte, allowed []string) bool {
	if len(origin) == 0 {
		return true
	}
	// An origin is scheme "://" host [ ":" port ] (RFC 6454 §6.1), or "null".
	_, oh, ok := bytes.Cut(origin, []byte("://"))
	if !ok || len(oh) == 0 || bytes.ContainsAny(oh, "/?#@") {
		oh = origin // "null", or not an origin: only a pattern may allow it
	} else if syntax.EqualFold(oh, host) {
		return true
	}
	for _, p := range allowed {
		if p == "*" {
			return true
		}
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(string(oh))); ok {
			return true
		}
	}
	return false
}
