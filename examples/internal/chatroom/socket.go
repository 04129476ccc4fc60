package chatroom

import (
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/examples/internal/chatapi"
	"github.com/dwellhttp/dwell/wait"
	"github.com/dwellhttp/dwell/websocket"
)

// The WebSocket transport (GET /ws?after=N, see chatapi): the same topic as the polls, followed
// in the continuation style. The connection is served in the event style (websocket.Serve), and
// the upgrade's request waits on the topic with Topic.OnNext, detached: its continuation sends
// each batch and waits again. A connection waiting for the next message costs its socket, its
// websocket.Conn, its request's Ctx and a waiter node, and no coroutine or goroutine. When the
// connection closes the wait ends (wait.ErrClosed) and the request with it; a shutdown ends it
// at once (wait.ErrShutdown) while the WebSocket closes with 1001.

// A socket is one WebSocket client following the room.
type socket struct {
	rm   *Room
	conn *websocket.Conn

	// What OnNext gave at once, when it gave something (see follow).
	inline bool // follow is in OnNext: deliver keeps the results rather than acting on them
	got    bool
	msgs   []chatapi.Entry
	last   uint64
	err    error
}

// socket handles GET /ws?after=N: the messages after N at once, as polls with timeout=0 would
// answer them up to one with none, then each batch as it is published. Messages the client
// posts on the socket go to the room as POST /messages's do.
func (rm *Room) socket(c *core.Ctx) {
	after, ok := chatapi.SocketArgs(c)
	if !ok {
		return
	}
	s := &socket{rm: rm}
	conn, err := websocket.Serve(c, chatapi.SocketOptions, &websocket.Events{Message: s.message})
	if err != nil {
		return // refused, and answered so
	}
	s.conn = conn
	cursor := after
	for {
		// A cursor ahead of the room (from an earlier process) counts as its last seq: the
		// answer's last comes back below it, which tells the client.
		msgs, last, _ := rm.topic.Since(cursor) // ErrMissed comes with what is kept: send it
		if !s.send(msgs, last) {
			return
		}
		cursor = last
		if len(msgs) == 0 {
			break
		}
	}
	s.follow(c, cursor)
}

// follow waits for the messages after cursor, and sends them as they come. OnNext runs its
// continuation at once, before it returns, when messages are there already: follow then takes
// them here and waits again, in a loop, rather than deliver calling follow within follow for as
// long as messages keep coming.
func (s *socket) follow(c *core.Ctx, cursor uint64) {
	for {
		s.inline, s.got = true, false
		s.rm.topic.OnNext(c, cursor, chatapi.SocketPing, s.deliver)
		s.inline = false
		if !s.got {
			return // detached: deliver runs when the wait ends
		}
		msgs, last, err := s.msgs, s.last, s.err
		s.msgs = nil
		if !s.sent(msgs, last, err) {
			return
		}
		cursor = last
	}
}

// deliver is OnNext's continuation, on the loop.
func (s *socket) deliver(c *core.Ctx, msgs []chatapi.Entry, last uint64, err error) {
	if s.inline {
		s.got, s.msgs, s.last, s.err = true, msgs, last, err
		return
	}
	if s.sent(msgs, last, err) {
		s.follow(c, last)
	}
}

// sent sends what a wait gave, and reports whether to wait again: not once the connection has
// closed (ErrClosed) or the server is shutting down (ErrShutdown: the WebSocket is closing
// with 1001). After ErrTimeout it sends an answer with no messages, the client's sign that the
// connection lives.
func (s *socket) sent(msgs []chatapi.Entry, last uint64, err error) bool {
	switch err {
	case nil, wait.ErrMissed, wait.ErrTimeout:
		return s.send(msgs, last)
	}
	return false
}

// send sends one answer, and reports whether the connection goes on.
func (s *socket) send(msgs []chatapi.Entry, last uint64) bool {
	return chatapi.Send(s.conn, chatapi.AppendAnswer(nil, msgs, last, s.rm.epoch))
}

// message takes a post from the client, on the loop: the room takes it at once (publish does not
// wait), and the answer goes back on the socket.
func (s *socket) message(conn *websocket.Conn, typ websocket.MessageType, data []byte) {
	if typ != websocket.Text {
		chatapi.Send(conn, chatapi.AppendRefused(nil, 400, "a post is a text message of JSON"))
		return
	}
	m, status, reason := chatapi.ParsePost(data)
	if status != 0 {
		chatapi.Send(conn, chatapi.AppendRefused(nil, status, reason))
		return
	}
	chatapi.Send(conn, chatapi.AppendPosted(nil, s.rm.publish(m), s.rm.epoch))
}
