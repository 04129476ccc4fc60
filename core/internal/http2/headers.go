package http2

import (
	"errors"

	"github.com/dwellhttp/dwell/core/internal/h2"
)

// An HTTP/2 connection's field blocks (h2conn.go): HEADERS and its CONTINUATIONs assembled
// within h2MaxHeaderBlock, then decoded — a new stream's request head, checked as RFC 9113 §8
// asks and laid out for its Ctx as an HTTP/1.1 head is, or the trailers of one under way — and
// the refusals answered on a stream no handler serves.

func (h *h2conn) headers(fh h2.Header, p []byte) error {
	id := fh.StreamID
	if id%2 == 0 {
		return &h2.ConnError{Code: h2.ProtocolError, Reason: "HEADERS on a stream the client cannot open"}
	}
	// An error of the stream alone (one that depends on itself, trailers on a stream the client
	// ended) refuses it only once its block is decoded (endBlock): the HPACK table must follow
	// every block the client's encoder wrote, or the requests after it would be misread.
	block, _, refused := h2.Headers(fh, p)
	if refused != nil && !streamError(refused) {
		return refused
	}
	if id <= h.maxID {
		s := h.streams[id]
		if s == nil {
			return &h2.ConnError{Code: h2.StreamClosed, Reason: "HEADERS on a closed stream"}
		}
		st, err := s.st.Recv(id, fh.Type, fh.Flags)
		switch {
		case err == nil:
			s.st = st
		case !streamError(err):
			return err
		case refused == nil:
			refused = err
		}
	}
	h.block = append(h.block[:0], block...)
	h.blockStream, h.blockEnd, h.blockRefused = id, fh.Flags.Has(h2.FlagEndStream), 0
	if refused != nil {
		h.blockRefused = streamErrorCode(refused)
	}
	if fh.Flags.Has(h2.FlagEndHeaders) {
		return h.endBlock()
	}
	return nil
}

// streamError reports whether err is an error of one stream, which the connection outlives.
func streamError(err error) bool { return streamErrorCode(err) != 0 }

// streamErrorCode returns the code of err when it is an error of one stream, and 0 (NO_ERROR,
// which none has) when it is not. It is called with an error only: what it takes the error
// into is allocated, and the path of a request that is not refused allocates nothing.
func streamErrorCode(err error) h2.ErrCode {
	var se *h2.StreamError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

func (h *h2conn) continuation(fh h2.Header, p []byte) error {
	if h.blockStream == 0 {
		return &h2.ConnError{Code: h2.ProtocolError, Reason: "CONTINUATION without a field block under way"}
	}
	if len(h.block)+len(p) > h2MaxHeaderBlock {
		return &h2.ConnError{Code: h2.EnhanceYourCalm, Reason: "field block larger than 64 KiB"}
	}
	h.block = append(h.block, p...)
	if fh.Flags.Has(h2.FlagEndHeaders) {
		return h.endBlock()
	}
	return nil
}

// endBlock decodes the field block assembled: a new stream's request head, or the trailers of
// one under way.
func (h *h2conn) endBlock() error {
	id, end := h.blockStream, h.blockEnd
	var refused error
	if h.blockRefused != 0 {
		refused = &h2.StreamError{StreamID: id, Code: h.blockRefused, Reason: "refused, its field block decoded"}
	}
	h.blockStream, h.blockRefused = 0, 0
	block := h.block
	if cap(h.block) > 16<<10 {
		h.block = nil // a large block is not kept for the next
	}
	if s := h.streams[id]; s != nil || id <= h.maxID {
		return h.trailers(s, id, block, refused)
	}
	h.maxID = id
	l := h.c.Loop
	b := &h2loop(l).h2head
	b.Reset(h2loop(l).h2headBuf, l.Fields)
	check := h2.RequestCheck{StreamID: id, ConnectProtocol: !l.Opts.DisableConnectProtocol}
	var bad error
	tooLarge := false
	protocol := "" // an extended CONNECT's :protocol (RFC 8441)
	// The crumbs of a cookie split into fields of its own (RFC 9113 §8.2.3), joined again into
	// one Cookie field as HTTP/1.1 sends it, which is what handlers, the bridge and proxies
	// that pass the request on see.
	cookie := h2loop(l).h2cookie[:0]
	err := h.dec.Decode(block, func(name, value []byte, _ bool) error {
		if bad != nil || tooLarge {
			return nil // the block is decoded to its end all the same: the table must follow it
		}
		if bad = check.Field(name, value); bad != nil {
			return nil
		}
		if b.Size()+len(cookie)+len(name)+len(value) > l.Opts.MaxHeaderBytes {
			tooLarge = true
			return nil
		}
		switch {
		case string(name) == "cookie":
			if len(cookie) > 0 {
				cookie = append(cookie, "; "...)
			}
			cookie = append(cookie, value...)
		case len(name) > 0 && name[0] == ':':
			switch string(name) {
			case ":method":
				b.Method(value)
			case ":path":
				b.Target(value)
			case ":authority":
				b.Authority(value)
			case ":protocol":
				protocol = connectProtocol(value)
			}
		case !b.Field(name, value):
			tooLarge = true
		}
		return nil
	})
	if len(cookie) > 0 && !tooLarge && !b.Field([]byte("cookie"), cookie) {
		tooLarge = true
	}
	h2loop(l).h2cookie = cookie[:0]
	h2loop(l).h2headBuf, l.Fields = b.Buf[:0], b.Fields[:0]
	if err != nil {
		return err // COMPRESSION_ERROR: the table can no longer be trusted
	}
	if bad == nil && !tooLarge {
		bad = check.End()
	}
	if h.goingAway {
		return nil // after GOAWAY: not served, and the client knows (its id is past the last)
	}
	if refused == nil {
		refused = bad
	}
	if refused == nil && len(h.streams) >= h2MaxStreams {
		refused = &h2.StreamError{StreamID: id, Code: h2.RefusedStream, Reason: "more streams than SETTINGS_MAX_CONCURRENT_STREAMS"}
	}
	if refused != nil {
		if err := h.spendReset(); err != nil {
			return err
		}
		return refused
	}
	if tooLarge {
		h.answer(id, 431)
		return nil
	}
	if protocol == "websocket" {
		// RFC 8441 §5: the extended CONNECT stands for HTTP/1.1's GET with Upgrade: websocket,
		// and is served as that GET (a route for it, a handler's Method), its stream handed over
		// as the connection would be (Seam.ConnectProtocol, HandOver).
		b.Method([]byte("GET"))
	}
	h.startStream(id, end, protocol)
	return nil
}

// ConnectProtocol returns an extended CONNECT's :protocol as a string: WebSocket's, the one
// browsers send, without a copy.
func connectProtocol(v []byte) string {
	if string(v) == "websocket" {
		return "websocket"
	}
	return string(v)
}

// trailers decodes the field block that ends stream id's request (s nil: a stream that has
// ended, whose trailers only the HPACK table needs; refused: the stream's error its HEADERS
// frame was, reported once the block is decoded).
func (h *h2conn) trailers(s *h2stream, id uint32, block []byte, refused error) error {
	check := h2.RequestCheck{StreamID: id, Trailers: true}
	var bad error
	err := h.dec.Decode(block, func(name, value []byte, _ bool) error {
		if bad == nil {
			bad = check.Field(name, value)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if s == nil {
		return nil
	}
	if refused != nil {
		return refused
	}
	if bad != nil {
		return bad
	}
	return s.receive(nil, true)
}

// answer sends a response of its own on stream id, which no handler serves: a refusal.
func (h *h2conn) answer(id uint32, status int) {
	b := h2.AppendStatus(h2loop(h.c.Loop).h2block[:0], status)
	h2loop(h.c.Loop).h2block = b[:0]
	h.queue(h2.AppendHeaders(h2loop(h.c.Loop).h2scratch[:0], id, true, b, int(h.peerMaxFrame)))
	h.c.Loop.Refused(status)
}
