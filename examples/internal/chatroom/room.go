// Package chatroom is the room of examples/chat: a long-poll chat over a wait.Topic, with the
// same messages as Server-Sent Events and over a WebSocket (socket.go), and the page of
// examples/internal/chatpage. The API is chatapi's.
package chatroom

import (
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/examples/internal/chatapi"
	"github.com/dwellhttp/dwell/examples/internal/chatpage"
	"github.com/dwellhttp/dwell/router"
	"github.com/dwellhttp/dwell/wait"
	"github.com/dwellhttp/dwell/websocket"
	"github.com/google/uuid"
)

// history is how many messages the room keeps for clients that come back with an old cursor.
const history = 1000

// A Room is one chat room, kept in memory: the last 1000 messages are there for clients that
// come back with an old cursor. Its methods may be called from any goroutine.
type Room struct {
	topic *wait.Topic[chatapi.Entry]
	// epoch names the room's history (see chatapi): a room lives as long as its process, and
	// a new one numbers its messages from 1 again, so clients must be able to tell them apart.
	// Random rather than the start time, which a clock set back could repeat.
	epoch string

	feed   *websocket.Feed[chatapi.Entry] // the topic for the WebSockets (socket.go)
	events *websocket.Events              // theirs, for every one
}

// New returns an empty room, with an epoch of its own.
func New() *Room {
	rm := &Room{topic: wait.NewTopic[chatapi.Entry](history), epoch: uuid.NewString()}
	rm.feed = chatapi.NewFeed(rm.topic, rm.epoch)
	rm.events = &websocket.Events{Message: rm.message}
	return rm
}

// Handler routes the room's endpoints and its page (GET /).
func (rm *Room) Handler() core.Handler {
	r := router.New()
	r.GET("/", chatpage.Serve)
	r.POST("/messages", rm.post)
	r.GET("/messages", rm.poll)
	r.GET("/events", func(c *core.Ctx) { chatapi.Events(c, rm.epoch, rm.topic.Last(), rm.topic.Next) })
	r.GET("/ws", rm.socket) // socket.go
	return r.Handler()
}

// post handles POST /messages (see chatapi): 201 once the message is in the room.
func (rm *Room) post(c *core.Ctx) {
	m, ok := chatapi.ReadPost(c)
	if !ok {
		return
	}
	chatapi.WritePosted(c, rm.publish(m), rm.epoch)
}

// publish numbers m, stamps it with the time and adds it to the room.
func (rm *Room) publish(m chatapi.Message) chatapi.Message {
	rm.topic.PublishFunc(func(seq uint64) chatapi.Entry {
		m.Seq = seq
		m.Time = time.Now().UTC().Format(chatpage.TimeFormat) // in the order of seq
		return chatapi.NewEntry(m, seq)
	})
	return m
}

// poll handles GET /messages?after=N&timeout=MS: the messages after N at once, or the next ones
// when they come, or none when the timeout passes. The answer's last is the cursor for the next
// poll.
func (rm *Room) poll(c *core.Ctx) {
	after, timeout, ok := chatapi.PollArgs(c)
	if !ok {
		return
	}
	msgs, last, err := rm.next(c, after, timeout)
	if err == wait.ErrClosed {
		return // the client left
	}
	// Messages, or none when the timeout passed or a shutdown began: the client polls again
	// with last. A cursor ahead of the room (from an earlier process: its epoch was another)
	// counts as the room's last seq, so last comes back below it.
	chatapi.WriteMessages(c, msgs, last, rm.epoch)
}

// next waits for the messages after the cursor. A parked request's stack holds the frames of
// the functions it is parked in, so this one, in the middle, is kept small: what comes before
// and after the wait lives in poll and chatapi.
func (rm *Room) next(c *core.Ctx, after uint64, timeout time.Duration) ([]chatapi.Entry, uint64, error) {
	if timeout == 0 {
		return rm.topic.Since(after)
	}
	return rm.topic.Next(c, after, timeout)
}
