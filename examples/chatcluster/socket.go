package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/examples/internal/chatapi"
	"github.com/dwellhttp/dwell/wait"
	"github.com/dwellhttp/dwell/wait/jetstream"
	"github.com/dwellhttp/dwell/websocket"
)

// The WebSocket transport (GET /ws?after=N, see chatapi): the generation's jetstream.Topic,
// the one the polls wait on, followed in the continuation style. The connection is served in
// the event style (websocket.Serve), and the upgrade's request waits on the Topic with OnNext,
// detached, parked in the generation like a poll (so that a stream created again wakes it at
// once): its continuation sends each batch and waits again. Between messages a connection
// costs its socket, its websocket.Conn, its request's Ctx and a waiter node, and no coroutine
// or goroutine; a message posted to any instance reaches it through the stream.
//
// The socket holds its generation while it follows it. When the generation ends, the client is
// told the new epoch (an answer with no messages and last 0, as a poll is) and the socket
// closes: the client reads the new history from its start on a new one.

// maxPosts bounds the posts a client may send ahead of their answers: past it, the client is
// not waiting for them, and the connection closes (1008).
const maxPosts = 16

// A socket is one WebSocket client following the room.
type socket struct {
	ch       *chat
	g        *generation // acquired until the socket stops following it
	released bool
	conn     *websocket.Conn

	// What OnNext gave at once, when it gave something (see follow).
	inline bool // follow is in OnNext: deliver keeps the results rather than acting on them
	got    bool
	msgs   []chatapi.Entry
	last   uint64
	err    error

	// The client's posts, oldest first; the first is being stored. On the loop only.
	posts []socketPost
}

// A socketPost is a client's message on the socket, copied.
type socketPost struct {
	typ  websocket.MessageType
	data []byte
}

// socket handles GET /ws?after=N: the messages after N at once, as polls with timeout=0 would
// answer them up to one with none, then each batch as the stream brings it, whichever instance
// it was posted to. Messages the client posts on the socket are stored as POST /messages's are.
func (ch *chat) socket(c *core.Ctx) {
	after, ok := chatapi.SocketArgs(c)
	if !ok {
		return
	}
	s := &socket{ch: ch, g: ch.acquire()}
	conn, err := websocket.Serve(c, chatapi.SocketOptions, &websocket.Events{Message: s.message})
	if err != nil {
		s.release() // refused, and answered so
		return
	}
	s.conn = conn
	cursor := after
	for {
		// The history may have to be read from the stream: since parks the handler (wait.Do)
		// meanwhile, while the connection's events go on.
		msgs, last, err := s.g.since(c, cursor)
		if !s.sent(msgs, last, err) {
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
// long as messages keep coming. Once OnNext has detached the request, it is parked in the
// generation, which wakes it when it ends.
func (s *socket) follow(c *core.Ctx, cursor uint64) {
	for {
		s.inline, s.got = true, false
		s.g.topic.OnNext(c, cursor, chatapi.SocketPing, s.deliver)
		s.inline = false
		if !s.got {
			s.g.park(c)
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
	s.g.unpark(c)
	if s.sent(msgs, last, err) {
		s.follow(c, last)
	}
}

// sent sends what a read or a wait of the generation gave, as a poll would answer it, and
// reports whether to wait again. It does not, and lets the generation go, once the connection
// has closed (ErrClosed), the server is shutting down (ErrShutdown: the WebSocket is closing
// with 1001), the generation has ended (the client is told the new epoch, and the socket
// closes) or the history could not be read (the socket closes with 1013, try again later).
// After ErrTimeout it sends an answer with no messages, the client's sign that the connection
// lives.
func (s *socket) sent(msgs []chatapi.Entry, last uint64, err error) bool {
	switch {
	case err == wait.ErrClosed || err == wait.ErrShutdown:
	case s.g.over():
		chatapi.Send(s.conn, chatapi.AppendAnswer(nil, nil, 0, s.ch.gen.Load().epoch))
		s.conn.Close(websocket.CloseNormal, "the history ended")
	case err == nil || err == wait.ErrMissed || err == wait.ErrTimeout:
		if chatapi.Send(s.conn, chatapi.AppendAnswer(nil, msgs, last, s.g.epoch)) {
			return true
		}
	case errors.Is(err, jetstream.ErrUnavailable):
		s.conn.Close(1013, "history unavailable") // 1013: try again later
	default:
		s.conn.Close(websocket.CloseInternalError, "")
	}
	s.release()
	return false
}

// release lets the generation go, once.
func (s *socket) release() {
	if !s.released {
		s.released = true
		s.g.release()
	}
}

// message takes a post from the client, on the loop. Storing it waits for NATS, which a loop
// must not do: a goroutine of its own stores it, one post at a time per socket, so that the
// room takes a client's posts in their order and the answers come in that order too.
func (s *socket) message(conn *websocket.Conn, typ websocket.MessageType, data []byte) {
	if len(s.posts) >= maxPosts {
		conn.Close(websocket.ClosePolicyViolation, "too many posts ahead of their answers")
		return
	}
	s.posts = append(s.posts, socketPost{typ, bytes.Clone(data)}) // data is lent for the call
	if len(s.posts) == 1 {
		s.store(conn)
	}
}

// store stores the first post waiting, on a goroutine, answers it, and goes on with the next
// one back on the loop.
func (s *socket) store(conn *websocket.Conn) {
	p := s.posts[0]
	go func() {
		conn.Send(websocket.Text, s.ch.storePost(p))
		conn.Loop().Post(func() {
			s.posts[0] = socketPost{}
			s.posts = s.posts[1:]
			if len(s.posts) > 0 {
				s.store(conn)
			}
		})
	}()
}

// storePost checks a post and stores it, as POST /messages does, and returns the socket's
// answer: the message's id, seq, time and epoch, or the refusal (400, 413, and 503 when NATS
// did not store it). It blocks, off the loop.
func (ch *chat) storePost(p socketPost) []byte {
	if p.typ != websocket.Text {
		return chatapi.AppendRefused(nil, 400, "a post is a text message of JSON")
	}
	m, status, reason := chatapi.ParsePost(p.data)
	if status != 0 {
		return chatapi.AppendRefused(nil, status, reason)
	}
	data, _ := json.Marshal(m)
	g := ch.acquire()
	defer g.release()
	seq, epoch, err := ch.publish(context.Background(), g, data) // the Topic bounds its wait
	if err != nil {
		return chatapi.AppendRefused(nil, 503, "message not stored: "+err.Error())
	}
	m.Seq = seq
	return chatapi.AppendPosted(nil, m, epoch)
}
