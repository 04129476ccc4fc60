package http2

import (
	"bytes"
	"strconv"

	"github.com/dwellhttp/dwell/core/internal/h2"
	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/internal/alias"
	"github.com/dwellhttp/dwell/internal/syntax"
)

// A response on an HTTP/2 stream: the head is a HEADERS frame, sent straight to the connection
// (it is not flow-controlled), and the body, held or streamed in the stream's queue exactly as
// over HTTP/1.1, leaves as DATA frames (h2send.go). The status and fields are the handler's, as over
// HTTP/1.1, less the fields that only mean something to a connection (RFC 9113 §8.2.2); no
// chunked coding, no Connection field: the stream's end delimits the body.

// WriteHead queues the response head as a HEADERS frame, ending the stream with it when there is
// no body (whole: the handler has returned, and the body held is all there is).
func (s *h2stream) WriteHead(cx *serve.Ctx, whole bool) {
	c := &s.Carrier
	h := s.h
	l := cx.Loop
	pool := &l.Pool
	status := cx.StatusCode()
	if s.protocol != "" && status >= 200 && status <= 299 {
		s.refuseTunnel(cx, !whole)
		whole, status = true, cx.StatusCode() // the refusal is whole, whatever the handler goes on to write
	}
	noBody := cx.NoBody()
	if noBody {
		c.Out.DropAfterHead(pool)
	}
	length := int64(-1)
	switch {
	case whole && (status < 200 || status == 204 || status == 304):
		if status == 304 {
			length = cx.DeclLen
		}
	case whole && noBody && cx.DeclLen < 0 && cx.Written == 0:
		// A HEAD whose handler wrote nothing says nothing of GET's length (RFC 9110 §8.6).
	case whole && cx.DeclLen < 0:
		length = cx.Written
	case cx.DeclLen >= 0:
		length = cx.DeclLen
	}
	block := appendFieldBlock(cx, h2loop(l).h2block[:0], status, length, noBody, whole)
	h2loop(l).h2block = block[:0]
	buffered := c.Out.AfterHead()
	c.Out.RemoveHead()
	cx.Resp |= serve.RfCommitted
	// The end of the stream goes with the head when there is no body, or with the body's one
	// DATA frame when the whole of it fits the windows now: a small response is two frames.
	trailers := cx.HasTrailers() // then they end the stream (finish)
	endWithHead := whole && buffered == 0 && !trailers
	out := h2.AppendHeaders(h2loop(l).h2scratch[:0], s.id, endWithHead, block, int(h.peerMaxFrame))
	h2loop(l).h2scratch = out[:0]
	h.queue(out)
	if endWithHead {
		s.ended = true
		return
	}
	if body, ok := c.Out.Whole(); whole && !trailers && ok && s.room(len(body)) == len(body) {
		// A body beyond CopyLimit moves, its buffer and all, into the connection's queue: its
		// bytes are copied once on their way out, by the handler's write. A smaller one is
		// copied behind its head, as over HTTP/1.1 (Socket.WriteHead).
		if len(body) > serve.CopyLimit {
			if b, ok := c.Out.TakeWhole(pool); ok {
				s.dataHeader(len(b), true)
				h.queueBuffer(b)
				return
			}
		}
		s.sendData(body, true)
		c.Out.Consume(pool, len(body))
		return
	}
	if whole {
		// The body waits for a window, for as long as the client likes until the write
		// timeout: it waits in a buffer of its size (a client that opens streams and no
		// window holds a few hundred bytes a stream, not a chunk).
		c.Out.Compact(pool)
	}
}

// writeTunnelHead answers an extended CONNECT whose stream is handed over (HandOver): its
// status (200 unless a 2xx was set) and the handler's fields, in a HEADERS frame that does not
// end the stream, whose DATA is the tunnel's from now on (RFC 8441 §5).
func (s *h2stream) writeTunnelHead(cx *serve.Ctx) {
	l := cx.Loop
	status := 200
	if cx.Status != 0 {
		status = int(cx.Status)
	}
	block := appendFieldBlock(cx, h2loop(l).h2block[:0], status, -1, true, false)
	h2loop(l).h2block = block[:0]
	out := h2.AppendHeaders(h2loop(l).h2scratch[:0], s.id, false, block, int(s.h.peerMaxFrame))
	h2loop(l).h2scratch = out[:0]
	s.h.queue(out)
	cx.Resp |= serve.RfCommitted
}

// An extended CONNECT (RFC 8441) asks for a tunnel, and a 2xx answer says that the tunnel is
// open (§5): the client reads the stream's DATA as the tunnel's from then on. Only HandOver
// opens one (writeTunnelHeadH2). Any other 2xx a handler gives — the page of a GET route, since
// the extended CONNECT for WebSocket is served as the GET it stands for — would have the client
// take a page for a tunnel, so the server refuses the tunnel in the handler's place. It does so
// with a status, 501 Not Implemented (RFC 9110 §15.6.2: the resource does not implement what
// the request asks of it), which it can always do: the head leaves here, so none has left yet.
// A status says that the server understood the request and declines it, which a WebSocket
// client reports as a failed handshake; RST_STREAM would say less — PROTOCOL_ERROR blames a
// request that was well formed (the server announced SETTINGS_ENABLE_CONNECT_PROTOCOL), and
// REFUSED_STREAM invites the client to try again. The handler's own refusals (400, 403, 404,
// 426, any status but 2xx) refuse the tunnel already, and go out as they are.

// refuseTunnel replaces the 2xx a handler gave an extended CONNECT without handing its stream
// over with the server's 501, as the server's other answers replace a handler's response (its
// body, body filter and content fields dropped), its trailers dropped too. A streaming handler
// (streaming) goes on writing after this head, and what it writes must not reach the client as
// the rest of the refusal: the refusal ends the stream at once — with its body when the windows
// take it now, else with its head — so that the handler's next writes find the stream ended
// and fail (ErrClosed), as after a client's reset.
func (s *h2stream) refuseTunnel(cx *serve.Ctx, streaming bool) {
	if x := cx.Extra; x != nil && x.Rare != nil {
		x.Rare.TrailerSet = x.Rare.TrailerSet[:0]
	}
	cx.ServerError(501, "this resource opens no tunnel for an extended CONNECT", serve.ErrTunnelRefused)
	// The refusal's body is one buffer (errorResponse, shapedBody: at most maxRefusalBody), so
	// it goes in one DATA frame, ending the stream, when the windows allow its length now.
	if n := s.Out.AfterHead(); streaming && n > 0 && int64(s.room(int(n))) != n {
		s.Out.DropAfterHead(&cx.Loop.Pool)
		cx.Written = 0
	}
}

// appendFieldBlock appends the response's field block: :status, Date, the handler's fields (in
// lower case, less the connection-specific ones), Content-Type and Content-Length.
func appendFieldBlock(cx *serve.Ctx, b []byte, status int, length int64, noBody, whole bool) []byte {
	l := cx.Loop
	b = h2.AppendStatus(b, status)
	if cx.Resp&serve.RfHasDate == 0 {
		b = h2.AppendField(b, []byte("date"), l.Clk.Date[:], false)
	}
	b = appendH2Fields(cx, b)
	if cx.Resp&serve.RfHasType == 0 && !noBody && (length != 0 || !whole) {
		b = h2.AppendField(b, []byte("content-type"), []byte("text/plain; charset=utf-8"), false)
	}
	if length >= 0 && !(status < 200 || status == 204) {
		var n [20]byte
		b = h2.AppendField(b, []byte("content-length"), strconv.AppendInt(n[:0], length, 10), false)
	}
	return b
}

// appendH2Fields appends the handler's fields, straight from the response's field set, their
// names in lower case, less those HTTP/2 forbids (h2Value says how their values go).
func appendH2Fields(cx *serve.Ctx, b []byte) []byte {
	set := cx.FieldSet()
	for i := 0; i < len(set); {
		name, value, next := serve.NextField(set, i)
		i = next
		if name := lowerName(cx.Loop, name); !connectionSpecific(name) {
			b = h2.AppendField(b, name, h2Value(value), false)
		}
	}
	return b
}

// lowerName returns name in lower case, as HTTP/2 sends field names (RFC 9113 §8.2.1), in the
// loop's scratch: valid until the next call.
func lowerName(l *serve.Loop, name []byte) []byte {
	lower := h2loop(l).h2name[:0]
	for _, ch := range name {
		lower = append(lower, syntax.Lower(ch))
	}
	h2loop(l).h2name = lower
	return lower
}

// connectionSpecific reports whether a (lower-case) field name is one HTTP/2 forbids (RFC 9113
// §8.2.2).
func connectionSpecific(name []byte) bool {
	switch string(name) {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		return true
	}
	return false
}

// SendInterim sends an informational response on the stream: a HEADERS frame that does not
// end it.
func (s *h2stream) SendInterim(cx *serve.Ctx, code int) {
	if s.State == serve.StClosed {
		return
	}
	l := cx.Loop
	b := h2.AppendStatus(h2loop(l).h2block[:0], code)
	if code != 100 {
		b = appendH2Fields(cx, b) // 103 Early Hints with its Link fields, say
	}
	h2loop(l).h2block = b[:0]
	out := h2.AppendHeaders(h2loop(l).h2scratch[:0], s.id, false, b, int(s.h.peerMaxFrame))
	h2loop(l).h2scratch = out[:0]
	s.h.queue(out)
}

// QueueTrailers encodes the response's trailers, to end the stream once its body is sent
// (finish).
func (s *h2stream) QueueTrailers(cx *serve.Ctx) {
	s.trailers = appendTrailerBlock(cx, s.Loop.Pool.Get(256))
}

// appendTrailerBlock appends the trailers as an HTTP/2 field block, as the head's fields are
// (appendH2Fields): their names in lower case.
func appendTrailerBlock(cx *serve.Ctx, b []byte) []byte {
	t := cx.Extra.Rare.TrailerSet
	for i := 0; i < len(t); i += 2 {
		// Viewing the strings as bytes is safe: lowerName and AppendField copy them.
		b = h2.AppendField(b, lowerName(cx.Loop, alias.Bytes(t[i])), h2Value(alias.Bytes(t[i+1])), false)
	}
	return b
}

// h2Value returns a field value as HTTP/2 sends it: without the whitespace around it, which
// HTTP/1.1 lets a value carry and HTTP/2 does not (RFC 9113 §8.2.1).
func h2Value(v []byte) []byte { return bytes.Trim(v, " \t") }
