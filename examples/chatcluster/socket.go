package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/examples/internal/chatapi"
	"github.com/dwellhttp/dwell/wait/jetstream"
	"github.com/dwellhttp/dwell/websocket"
)

// The WebSocket transport (GET /ws?after=N, see chatapi): the generation's jetstream.Topic,
// the one the polls wait on, followed by the generation's websocket.Feed. The connection is
// served in the event style (websocket.Serve), and its upgrade's request follows the Topic
// through the generation's OnNext, detached and parked in the generation like a poll (so that
// a stream created again wakes it at once). Between messages a connection costs its socket,
// its websocket.Conn, its request's Ctx and a few words, and no coroutine or goroutine; a
// message posted to any instance reaches it through the stream.
//
// The socket holds its generation until it closes. When the generation ends, the client is
// told the new epoch (an answer with no messages and last 0, as a poll is) and the socket
// closes: the client reads the new history from its start on a new one.

// maxPosts bounds the posts a client may send ahead of their answers: past it, the client is
// not waiting for them, and the connection closes (1008).
const maxPosts = 16

// A socket is one WebSocket client of the room: the generation it follows, and its posts.
type socket struct {
	ch *chat
	g  *generation // acquired until the connection closes

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
	conn, err := websocket.Serve(c, chatapi.SocketOptions, &websocket.Events{Message: s.message, Close: s.closed})
	if err != nil {
		s.g.release() // refused, and answered so
		return
	}
	// The history may have to be read from the stream: the Topic parks the handler
	// (wait.Do) meanwhile, while the connection's events go on.
	s.g.feed.Follow(c, conn, after)
}

// closed lets the generation go, once the connection has closed.
func (s *socket) closed(*websocket.Conn, error) { s.g.release() }

// endSocket is the Feed's End: the generation's OnNext failed, the socket still open. A
// generation that ended tells the client the new epoch, and closes the socket (1000); a
// history NATS could not give closes it with 1013, try again later.
func (ch *chat) endSocket(conn *websocket.Conn, err error) {
	switch {
	case err == errEnded:
		chatapi.Send(conn, chatapi.AppendAnswer(nil, nil, 0, ch.gen.Load().epoch))
		conn.Close(websocket.CloseNormal, "the history ended")
	case errors.Is(err, jetstream.ErrUnavailable):
		conn.Close(1013, "history unavailable") // 1013: try again later
	default:
		conn.Close(websocket.CloseInternalError, "")
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
	r := conn.Remote() // what the goroutine sends with
	go func() {
		r.Send(websocket.Text, s.ch.storePost(p))
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
