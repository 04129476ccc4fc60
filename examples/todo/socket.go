package main

import (
	"encoding/json"
	"net/url"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/wait"
	"github.com/dwellhttp/dwell/websocket"
)

// GET /todos/ws?after=N follows the change log over a WebSocket, in the event style: the
// upgrade's request waits on the topic, detached, so a socket waiting for the next change costs
// no goroutine and no coroutine (websocket.Feed). Every message is a text message with what a
// poll would answer, {"changes": [...], "next": N, "missed": true}: first those after N (read
// from the database when N is older than the topic's memory, a long catch-up in several
// messages), then one with no changes (the client has caught up, and next is its cursor), then
// each change as it is made, and one with no changes after eventsPing with nothing new, so that
// a client hearing nothing for longer knows its connection is gone. Without after, it follows
// from now. A shutdown closes the socket with 1001; the client reconnects with its cursor.

// newFeed returns the Feed the sockets follow topic with.
func newFeed(topic *wait.Topic[change]) *websocket.Feed[change] {
	return &websocket.Feed[change]{
		Topic: topic,
		// A function of its arguments alone, as a Feed needs: one change made while many
		// sockets wait is encoded once for all of them.
		Encode: func(b []byte, msgs []change, next uint64, err error) []byte {
			if msgs == nil {
				msgs = []change{}
			}
			out, _ := json.Marshal(changesAnswer{Changes: msgs, Next: next, Missed: err == wait.ErrMissed})
			return append(b, out...)
		},
		Seq:       func(ch change) uint64 { return ch.Seq },
		CaughtUp:  true,
		Heartbeat: eventsPing,
	}
}

// socketOptions returns the sockets' options: compressed messages where the browser offers
// (a catch-up shrinks a lot), and, besides the page's own origin, pages of -origin, which may
// read the API anyway (CORS). Clients send nothing the server reads: a small MaxMessage.
func socketOptions(origin string) *websocket.Options {
	o := &websocket.Options{Compress: true, MaxMessage: 1 << 10}
	if u, err := url.Parse(origin); err == nil && u.Host != "" {
		o.Origins = []string{u.Host}
	}
	return o
}

// listenOnly are the sockets' events: none of the application's, what the client sends being
// ignored (the Feed adds its own). One value for all, as a Feed copies them.
var listenOnly = &websocket.Events{}

// socket handles GET /todos/ws.
func (a *app) socket(c *core.Ctx) {
	after, ok := queryUint(c, "after", a.todos.changes.Last())
	if !ok {
		fail(c, 400, "after must be a sequence number")
		return
	}
	ws, err := websocket.Serve(c, a.socketOptions, listenOnly)
	if err != nil {
		return // refused, and answered with the reason
	}
	a.feed.Follow(c, ws, after)
}
