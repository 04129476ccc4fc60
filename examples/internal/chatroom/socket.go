package chatroom

import (
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/examples/internal/chatapi"
	"github.com/dwellhttp/dwell/websocket"
)

// The WebSocket transport (GET /ws?after=N, see chatapi): the same topic as the polls, followed
// by a websocket.Feed. The connection is served in the event style (websocket.Serve) and its
// upgrade's request follows the topic, detached: a connection waiting for the next message
// costs its socket, its websocket.Conn, its request's Ctx and the Feed's few words, and no
// coroutine or goroutine. A shutdown closes it with 1001.

// socket handles GET /ws?after=N: the messages after N at once, as polls with timeout=0 would
// answer them up to one with none, then each batch as it is published. Messages the client
// posts on the socket go to the room as POST /messages's do.
func (rm *Room) socket(c *core.Ctx) {
	after, ok := chatapi.SocketArgs(c)
	if !ok {
		return
	}
	conn, err := websocket.Serve(c, chatapi.SocketOptions, rm.events)
	if err != nil {
		return // refused, and answered so
	}
	rm.feed.Follow(c, conn, after)
}

// message takes a post from the client, on the loop: the room takes it at once (publish does not
// wait), and the answer goes back on the socket.
func (rm *Room) message(conn *websocket.Conn, typ websocket.MessageType, data []byte) {
	if typ != websocket.Text {
		chatapi.Send(conn, chatapi.AppendRefused(nil, 400, "a post is a text message of JSON"))
		return
	}
	m, status, reason := chatapi.ParsePost(data)
	if status != 0 {
		chatapi.Send(conn, chatapi.AppendRefused(nil, status, reason))
		return
	}
	chatapi.Send(conn, chatapi.AppendPosted(nil, rm.publish(m), rm.epoch))
}
