package http2

import (
	"errors"

	"github.com/dwellhttp/dwell/core/internal/h2"
	"github.com/dwellhttp/dwell/core/internal/serve"
)

// HTTP/2 (RFC 9113) on the loops. A connection whose first bytes are HTTP/2's client preface —
// h2c with prior knowledge on a plaintext listener, or a TLS connection that chose "h2" by ALPN —
// is handed over from HTTP/1.1 to an h2conn, a Protocol like any other (handover.go): it gets
// the connection's bytes as they arrive, takes the frames apart (core/internal/h2), answers the
// connection's own frames, and makes every stream a request with a Ctx of its own (h2stream.go),
// served by the same handlers as an HTTP/1.1 request. The streams' frames go out through the
// connection's one write queue, under its high-water mark.

// What the server announces in its SETTINGS, and the windows it keeps.
const (
	h2MaxStreams = 100 // SETTINGS_MAX_CONCURRENT_STREAMS
	// h2StreamWindow is each stream's receive window (the default, so not announced): the
	// request body bytes a stream may hold unread.
	h2StreamWindow = h2.DefaultWindow
	// h2ConnWindow is the connection's receive window, raised from the default by a
	// WINDOW_UPDATE at the start: what all the streams together may hold unread.
	h2ConnWindow = 1 << 20
	// h2MaxHeaderBlock bounds a field block as it arrives (HEADERS and its CONTINUATIONs),
	// before it is decoded: beyond it the connection ends (ENHANCE_YOUR_CALM).
	h2MaxHeaderBlock = 64 << 10
)

// An h2conn is the HTTP/2 side of one connection.
type h2conn struct {
	c   *serve.Socket // the connection it speaks on
	hc  *serve.Conn   // c, handed over to HTTP/2
	dec *h2.Decoder

	streams map[uint32]*h2stream // the streams not closed yet, by id
	maxID   uint32               // the highest stream id the client has opened

	peerMaxFrame uint32 // SETTINGS_MAX_FRAME_SIZE of the client
	peerWindow   uint32 // SETTINGS_INITIAL_WINDOW_SIZE of the client
	blockStream  uint32 // the stream of the field block under way (block), 0 when none is
	sendWin      h2.SendWindow
	recvWin      h2.RecvWindow

	// The field block being assembled from HEADERS and CONTINUATION frames.
	block []byte

	blocked  []*h2stream // streams with DATA waiting for a window or for room in the queue
	starting []h2start   // streams whose handlers start once the frames at hand are handled

	// lingering counts the streams that ended (a reset, the client's or the server's) while
	// their handlers were still under way — parked on a blocking call under wait.Do, say. They
	// keep their places among the handlers until they return (handlers).
	lingering int16
	// waiting counts the streams opened while every place among the handlers was taken: their
	// handlers start, oldest first, as places free (startWaiting). Both count at most
	// h2MaxStreams: streams open, and handlers (an int16 each keeps the connection 176 bytes).
	waiting int16

	// Abuse bounds (h2.Calm.go): the frames that carry no request the client may still send,
	// and the streams reset before their responses were complete (spendReset), against those
	// completed.
	calm      h2.Calm
	resets    int32
	completed int32

	// blockRefused is the code of the stream error the block's HEADERS frame was (0: none),
	// answered once the block is decoded (h2conn.headers).
	blockRefused h2.ErrCode
	blockEnd     bool // the block's HEADERS frame ended the stream

	preface   bool // the client's preface has been read
	settings  bool // the client's first SETTINGS has been read
	goingAway bool // GOAWAY sent: no new streams
	shutdown  bool // the server is shutting down (Shutdown)
	closed    bool
}

var errH2Protocol = errors.New("dwell: HTTP/2 protocol error")

// startH2 hands c, whose input begins with the client preface, over to HTTP/2.
func startH2(c *serve.Socket) {
	l := c.Loop
	h := &h2conn{
		c:            c,
		dec:          h2.NewDecoder(4096),
		streams:      make(map[uint32]*h2stream),
		peerMaxFrame: h2.MinMaxFrameSize,
		peerWindow:   h2.DefaultWindow,
		sendWin:      h2.DefaultWindow,
		recvWin:      h2.NewRecvWindow(h2ConnWindow),
	}
	h.hc = c.HandOverTo(h, true)
	c.Scan.Reset()
	b := h2loop(l).h2scratch[:0]
	settings := [...]h2.Setting{
		{ID: h2.SettingMaxConcurrentStreams, Value: h2MaxStreams},
		{ID: h2.SettingMaxHeaderListSize, Value: uint32(l.Opts.MaxHeaderBytes)},
		{ID: h2.SettingEnablePush, Value: 0},
		{ID: h2.SettingEnableConnectProtocol, Value: 1}, // last: see DisableConnectProtocol
	}
	n := len(settings)
	if l.Opts.DisableConnectProtocol {
		n--
	}
	b = h2.AppendSettings(b, settings[:n]...)
	b = h2.AppendWindowUpdate(b, 0, h2ConnWindow-h2.DefaultWindow)
	h.queue(b)
	h2loop(l).h2scratch = b[:0]
	c.SetReadDeadline(l.Opts.IdleTimeout) // until the first stream (see Timeout)
	h.calm.Start(l.Clk.TurnNow())
}

// queue adds frames to the connection's output.
func (h *h2conn) queue(b []byte) {
	if !h.closed {
		h.hc.Queue(b)
	}
}

// QueueBuffer adds b, a buffer of the loop's pool, to the connection's output as it stands,
// which owns it from now on (or gives it back, once the connection has closed).
func (h *h2conn) queueBuffer(b []byte) {
	if h.closed {
		h.c.Loop.Pool.Put(b)
		return
	}
	h.hc.QueueBuffer(b)
}

// Receive takes the frames that have arrived whole. It stops early when the output is over the
// high-water mark: what the client's frames make the server write (SETTINGS and PING answers, a
// stream's response) waits for the client to read, and so does the rest of its input.
func (h *h2conn) Receive(hc *serve.Conn, in []byte) int {
	used := 0
	if !h.preface {
		if len(in) < len(h2.ClientPreface) {
			return 0
		}
		h.preface = true
		used = len(h2.ClientPreface)
	}
	for !h.closed && !h.c.OutputBlocked() {
		rest := in[used:]
		if len(rest) < h2.HeaderLen {
			break
		}
		fh := h2.ParseHeader(rest)
		if err := fh.Check(h2.MinMaxFrameSize); err != nil {
			h.fail(err)
			return len(in)
		}
		n := h2.HeaderLen + int(fh.Length)
		if len(rest) < n {
			break
		}
		used += n
		if err := h.frame(fh, rest[h2.HeaderLen:n]); err != nil {
			h.fail(err)
		}
	}
	for i := 0; i < len(h.starting); i++ { // a handler may end the connection, never start one
		st := h.starting[i]
		h.starting[i] = h2start{}
		st.run()
	}
	h.starting = h.starting[:0]
	if h.closed {
		return len(in)
	}
	return used
}

// fail answers a connection error with GOAWAY and ends the connection, or a stream error with
// RST_STREAM and ends the stream.
func (h *h2conn) fail(err error) {
	var se *h2.StreamError
	if errors.As(err, &se) {
		if s := h.streams[se.StreamID]; s != nil {
			if !s.ended {
				if err := h.spendReset(); err != nil {
					h.fail(err)
					return
				}
			}
			s.reset(se.Code)
			return
		}
		h.queue(h2.AppendRSTStream(h2loop(h.c.Loop).h2scratch[:0], se.StreamID, se.Code))
		return
	}
	code := h2.ProtocolError
	reason := err.Error()
	var ce *h2.ConnError
	if errors.As(err, &ce) {
		code, reason = ce.Code, ce.Reason
	}
	h.goAway(code, reason)
}

// goAway sends GOAWAY with code and closes the connection once its output is written: the
// streams under way end with it.
func (h *h2conn) goAway(code h2.ErrCode, reason string) {
	if h.closed {
		return
	}
	if h.c.Loop.DebugEnabled() {
		h.c.Loop.Log.Debug("dwell: HTTP/2 connection error", "code", code.String(), "reason", reason,
			"remote", h.c.RemoteAddr())
	}
	h.queue(h2.AppendGoAway(h2loop(h.c.Loop).h2scratch[:0], h.maxID, code, []byte(reason)))
	h.goingAway = true
	h.closed = true // the streams' ends send nothing more
	h.endStreams(serve.ErrClosed)
	h.hc.SetErr(errH2Protocol)
	if code == h2.EnhanceYourCalm {
		h.hc.CloseUnread() // a flood: what follows it is not read
		return
	}
	h.hc.Close()
}

// endStreams closes every stream with err, their handlers woken with it.
func (h *h2conn) endStreams(err error) {
	for _, s := range h.streams {
		s.Close(err)
	}
}

// frame handles one frame.
func (h *h2conn) frame(fh h2.Header, p []byte) error {
	if h.blockStream != 0 && (fh.Type != h2.TypeContinuation || fh.StreamID != h.blockStream) {
		return &h2.ConnError{Code: h2.ProtocolError, Reason: "a field block interrupted by another frame"}
	}
	if !h.settings && (fh.Type != h2.TypeSettings || fh.Flags.Has(h2.FlagAck)) {
		return &h2.ConnError{Code: h2.ProtocolError, Reason: "the client's preface is not followed by SETTINGS"}
	}
	if !h.calm.Take(fh, h.c.Loop.Clk.TurnNow()) {
		return &h2.ConnError{Code: h2.EnhanceYourCalm, Reason: "too many frames that carry no request"}
	}
	switch fh.Type {
	case h2.TypeData:
		return h.data(fh, p)
	case h2.TypeHeaders:
		return h.headers(fh, p)
	case h2.TypeContinuation:
		return h.continuation(fh, p)
	case h2.TypePriority:
		_, err := h2.PriorityFrame(fh, p)
		return err
	case h2.TypeRSTStream:
		return h.rstStream(fh, p)
	case h2.TypeSettings:
		return h.settingsFrame(fh, p)
	case h2.TypePing:
		if !fh.Flags.Has(h2.FlagAck) {
			h.queue(h2.AppendPing(h2loop(h.c.Loop).h2scratch[:0], true, h2.Ping(p)))
		}
	case h2.TypeGoAway:
		// The client is done with the connection: the streams under way finish, and the server
		// says with a GOAWAY of its own which of them it took, so that a stream the client
		// opens still is known not to be served (RFC 9113 §6.8), as at a shutdown.
		h.stop()
		if len(h.streams) == 0 {
			h.hc.Close()
		}
	case h2.TypeWindowUpdate:
		return h.windowUpdate(fh, p)
	}
	return nil // PUSH_PROMISE is refused by Check; unknown types are ignored (RFC 9113 §4.1)
}

func (h *h2conn) settingsFrame(fh h2.Header, p []byte) error {
	if fh.Flags.Has(h2.FlagAck) {
		return nil
	}
	h.settings = true
	err := h2.Settings(p, func(s h2.Setting) error {
		switch s.ID {
		case h2.SettingMaxFrameSize:
			h.peerMaxFrame = s.Value
		case h2.SettingInitialWindowSize:
			old := h.peerWindow
			h.peerWindow = s.Value
			for _, st := range h.streams {
				if err := st.sendWin.Resize(old, s.Value); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	h.queue(h2.AppendSettingsAck(h2loop(h.c.Loop).h2scratch[:0]))
	h.unblock()
	return nil
}

func (h *h2conn) windowUpdate(fh h2.Header, p []byte) error {
	inc, err := h2.WindowUpdate(fh, p)
	if err != nil {
		return err
	}
	if fh.StreamID == 0 {
		if err := h.sendWin.Update(0, inc); err != nil {
			return err
		}
		h.unblock()
		return nil
	}
	if fh.StreamID > h.maxID {
		return &h2.ConnError{Code: h2.ProtocolError, Reason: "WINDOW_UPDATE on an idle stream"}
	}
	s := h.streams[fh.StreamID]
	if s == nil {
		return nil // a stream that has ended
	}
	if err := s.sendWin.Update(fh.StreamID, inc); err != nil {
		return err
	}
	s.writable()
	return nil
}

func (h *h2conn) rstStream(fh h2.Header, p []byte) error {
	if fh.StreamID > h.maxID {
		return &h2.ConnError{Code: h2.ProtocolError, Reason: "RST_STREAM on an idle stream"}
	}
	if s := h.streams[fh.StreamID]; s != nil {
		if !s.ended {
			if err := h.spendReset(); err != nil {
				return err
			}
		}
		s.peerReset()
	}
	return nil
}

// spendReset counts a stream reset before its response was complete, whoever sent the
// RST_STREAM: the client (rapid reset, CVE-2023-44487), or the server, made to by a frame of
// the client's that is an error of a stream under way (MadeYouReset, CVE-2025-8671: a zero
// WINDOW_UPDATE, DATA past the Content-Length, HEADERS on a stream the client ended) or of a new
// stream, refused (over the limit, malformed). Either way the client has had work started or
// refused for nothing, and the same bound holds both: FreeResets, and one more for every two
// streams that complete. Not counted: a stream that no longer exists (DATA in flight when its
// reset crossed it), and the resets a handler chooses (a write timeout, a panic, Ctx's own
// reset), which are the application's.
func (h *h2conn) spendReset() error {
	if h.resets++; h.resets > h2.FreeResets+h.completed/2 {
		return &h2.ConnError{Code: h2.EnhanceYourCalm, Reason: "too many streams reset before their responses"}
	}
	return nil
}

func (h *h2conn) data(fh h2.Header, p []byte) error {
	id := fh.StreamID
	if id > h.maxID {
		return &h2.ConnError{Code: h2.ProtocolError, Reason: "DATA on an idle stream"}
	}
	if err := h.recvWin.Receive(0, fh.Length); err != nil {
		return err
	}
	h.calm.Moved(int(fh.Length))
	data, err := h2.Data(fh, p)
	if err != nil {
		return err
	}
	s := h.streams[id]
	if s == nil {
		h.consumed(fh.Length) // the connection's window counts it all the same
		if id%2 == 0 {
			return &h2.ConnError{Code: h2.ProtocolError, Reason: "DATA on a stream the client cannot open"}
		}
		return &h2.StreamError{StreamID: id, Code: h2.StreamClosed, Reason: "DATA on a closed stream"}
	}
	st, err := s.st.Recv(id, fh.Type, fh.Flags)
	if err != nil {
		h.consumed(fh.Length)
		return err
	}
	s.st = st
	if err := s.recvWin.Receive(id, fh.Length); err != nil {
		h.consumed(fh.Length)
		return err
	}
	// Padding is consumed at once; the data when the handler reads it.
	if pad := fh.Length - uint32(len(data)); pad > 0 {
		h.consumed(pad)
		s.consumed(pad)
	}
	return s.receive(data, fh.Flags.Has(h2.FlagEndStream))
}

// consumed gives n bytes of the connection's window back as they are done with.
func (h *h2conn) consumed(n uint32) {
	if inc := h.recvWin.Consume(n); inc > 0 {
		h.queue(h2.AppendWindowUpdate(h2loop(h.c.Loop).h2scratch[:0], 0, inc))
	}
}

// unblock lets the streams waiting for a window or for room send, in turn.
func (h *h2conn) unblock() {
	n := len(h.blocked)
	for i := 0; i < n; i++ {
		s := h.blocked[i]
		h.blocked[i] = nil
		s.blocked = false
		s.writable() // which may put it back in line, behind the others
	}
	k := copy(h.blocked, h.blocked[n:])
	clear(h.blocked[k:])
	h.blocked = h.blocked[:k]
}

// Drained: the queue has room again.
func (h *h2conn) Drained(*serve.Conn) { h.unblock() }

// Timeout: the connection has had no stream for Options.IdleTimeout. It says GOAWAY, and closes.
// (The streams keep deadlines of their own.)
func (h *h2conn) Timeout(*serve.Conn) {
	if len(h.streams) == 0 {
		h.goAway(h2.NoError, "idle")
	}
}

// Shutdown sends GOAWAY: the streams under way finish, and the connection closes after them.
func (h *h2conn) Shutdown(hc *serve.Conn) {
	if h.shutdown {
		return
	}
	h.shutdown = true
	h.stop()
	for _, s := range h.streams {
		switch cx := s.Ctx; {
		case s.draining:
			s.endDrain() // its response is whole: the rest of its request is not waited for
		case s.State == serve.StHandedOver:
			// A stream handed over (a WebSocket's) ends its protocol's way, as a connection does.
			p := s.hc
			p.CallProtocol(p.ProtocolShutdown)
		case cx != nil && cx.Active():
			cx.WakeForShutdown()
		}
	}
	if len(h.streams) == 0 {
		hc.Close()
	}
}

// EndGrace: the shutdown's grace period is over (serve.GraceEnder). Each handler still under
// way is woken with ErrShutdown, as an HTTP/1.1 request's is, and its response (503 when it had
// written none) still goes out; the connection closes after the last stream, as after GOAWAY.
// A stream still waiting for a place is refused (REFUSED_STREAM: never processed, the client
// may send it again elsewhere); one handed over (a WebSocket's) ends, as a connection handed
// over is closed.
func (h *h2conn) EndGrace(hc *serve.Conn) {
	h.Shutdown(hc)
	for _, s := range h.streams {
		switch cx := s.Ctx; {
		case s.waits:
			// Refusing it starts no other: a waiting stream holds no handler's place.
			s.reset(h2.RefusedStream)
		case s.State == serve.StHandedOver:
			s.Close(serve.ErrShutdown)
		case cx != nil && cx.Active():
			cx.EndGrace()
		}
	}
}

// stop takes no more streams, and says so with GOAWAY NO_ERROR naming the last it took.
func (h *h2conn) stop() {
	if !h.goingAway {
		h.goingAway = true
		h.queue(h2.AppendGoAway(h2loop(h.c.Loop).h2scratch[:0], h.maxID, h2.NoError, nil))
	}
}

// Closed: the connection is gone, and so is every stream on it.
func (h *h2conn) Closed(_ *serve.Conn, err error) {
	h.closed = true
	if err == nil {
		err = serve.ErrClosed
	}
	h.endStreams(err)
}

// CountStreams counts the connection and its streams in n (StreamCounter).
func (h *h2conn) CountStreams(n *serve.ConnStates) {
	n.HTTP2++
	for _, s := range h.streams {
		n.Streams++
		if s.State == serve.StHandedOver {
			continue // a WebSocket's (RFC 8441): open, not a parked request
		}
		if cx := s.Ctx; cx != nil && cx.Parked() {
			n.ParkedStreams++
		}
	}
}

// handlers counts the places among the handlers that SETTINGS_MAX_CONCURRENT_STREAMS bounds:
// the streams open but those waiting for a place, and the streams ended whose handlers still
// run. A stream reset while its handler waits for a blocking call keeps its place until the
// call returns, as in x/net, so that resetting streams, or having the server reset them, cannot
// pile up work the limit would have held back. The client, which counts the reset stream as
// closed, may open another meanwhile: that one waits for a place (startStream), as x/net's
// would, where refusing it would punish a client that kept to the limit.
func (h *h2conn) handlers() int { return len(h.streams) - int(h.waiting) + int(h.lingering) }

// startWaiting starts the handlers of the streams waiting for a place, oldest first, while
// there are places: after a handler returned on a stream that had ended, or a stream ended.
// Each starts in the loop's pending list (h2stream.GoOn), outside whatever freed its place.
func (h *h2conn) startWaiting() {
	for h.waiting > 0 && !h.closed && h.handlers() < h2MaxStreams {
		var first *h2stream
		for _, s := range h.streams {
			// One reset while it waited is closed, its body still drained: it leaves waiting
			// when it is released.
			if s.waits && s.State != serve.StClosed && (first == nil || s.id < first.id) {
				first = s
			}
		}
		if first == nil {
			return
		}
		first.waits = false
		h.waiting--
		first.Loop.Pending = append(first.Loop.Pending, first)
	}
}

// streamEnded forgets a stream that has closed, and closes the connection after the last
// stream once it is going away.
func (h *h2conn) streamEnded(s *h2stream) {
	delete(h.streams, s.id)
	h.startWaiting()
	if len(h.streams) > 0 || h.closed {
		return
	}
	if h.goingAway {
		h.hc.Close()
		return
	}
	h.c.SetReadDeadline(h.c.Loop.Opts.IdleTimeout)
}
