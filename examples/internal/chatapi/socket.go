package chatapi

import (
	"encoding/json"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/websocket"
)

// The WebSocket transport, beside the polls and the event stream:
//
//	GET /ws?after=N  upgrades to a WebSocket that carries the room from after N (default 0)
//
// Every frame is a text message of JSON. The server sends poll answers, {"messages": [...],
// "last": N, "epoch": E}, exactly as GET /messages?after=N would answer them: first, at once,
// those a poll with timeout=0 would give, one after another, until one has no messages (the
// client has read the history up to now); then one for each batch of messages as they are
// published, and one with no messages after SocketPing with nothing new, so that a client that
// hears nothing for longer knows its connection is gone. The client keeps its cursor as a
// poller does (the last of the last answer) and reconnects with it: nothing is lost or given
// twice. An answer of another epoch, or whose last is below the cursor, means what it means to
// a poll: the client reads the new history from after=0, on a new connection.
//
// A client may post on the socket as with POST /messages: a message {"text", "name"} is
// answered, in order, with {"posted": {"id", "seq", "time", "epoch"}} once the message is in
// the room (it comes back in the answers like any other), or {"error": "...", "status": S}
// with the status a POST would have had (400, 413, 503; for 503 the message was not stored).
// A message over MaxBody closes the connection (1009).
//
// The server closes the connection with 1001 when it shuts down, 1013 when the history cannot
// be read (chatcluster without NATS), and 1000 once it has answered the new epoch of a
// history that ended (chatcluster's stream created again); the client reconnects. A slow
// client is held back: the server sends it no more while the answers it has not read are past
// the server's high-water mark, and goes on from its cursor when it reads; a long catch-up
// comes in several answers. A client that stops reading is closed once its output makes no
// progress for the server's write timeout or it leaves a ping unanswered; it reconnects with
// its cursor.

// SocketPing is how long the socket goes with nothing new before the server sends an answer
// with no messages, as a poll's timeout would end it.
const SocketPing = 25 * time.Second

// SocketOptions are the chat servers' WebSocket options: messages compressed when the browser
// offers it (the answers of a reconnecting client shrink a lot), a client's message at most
// MaxBody, pings every 30 s; a client too slow for 1 MiB of output is closed with 1008.
var SocketOptions = &websocket.Options{Compress: true, MaxMessage: MaxBody}

// NewFeed returns the Feed that sends a topic of the history named epoch to the sockets: the
// answers a poll would give, a batch to a frame ({"messages", "last", "epoch"}); one with no
// messages once the client has caught up, and after SocketPing with nothing new; a batch of
// more than half the socket's MaxQueued split in several answers. Set its End, if the topic
// can fail, before the first Follow.
func NewFeed(topic websocket.Source[Entry], epoch string) *websocket.Feed[Entry] {
	return &websocket.Feed[Entry]{
		Topic: topic,
		Encode: func(b []byte, msgs []Entry, last uint64, _ error) []byte {
			return AppendAnswer(b, msgs, last, epoch)
		},
		Seq:       func(e Entry) uint64 { return e.Seq },
		CaughtUp:  true,
		Heartbeat: SocketPing,
	}
}

// SocketArgs reads the cursor of GET /ws?after=N; it answers 400 for a bad one and returns false
// then.
func SocketArgs(c *core.Ctx) (after uint64, ok bool) {
	if after, ok = queryUint(c, "after", 0); !ok {
		Fail(c, 400, "after must be a sequence number")
	}
	return after, ok
}

// AppendPosted appends the socket's answer to a post stored in the history of the given epoch:
// {"posted": {"id", "seq", "time", "epoch"}}.
func AppendPosted(b []byte, m Message, epoch string) []byte {
	return append(append(append(b, `{"posted":`...), posted(m, epoch)...), '}')
}

// AppendRefused appends the socket's answer to a post refused with the given status and reason:
// {"error": reason, "status": status}.
func AppendRefused(b []byte, status int, reason string) []byte {
	out, _ := json.Marshal(struct {
		Error  string `json:"error"`
		Status int    `json:"status"`
	}{reason, status})
	return append(b, out...)
}

// Send sends a socket frame built by one of the Append functions, and reports whether the
// connection goes on: false once it is closed, or dropped as a slow client.
func Send(conn *websocket.Conn, frame []byte) bool {
	switch conn.Send(websocket.Text, frame) {
	case websocket.SendClosed, websocket.SendDropped:
		return false
	}
	return true
}
