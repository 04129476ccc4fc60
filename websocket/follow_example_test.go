package websocket_test

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/wait"
	"github.com/dwellhttp/dwell/websocket"
)

// A WebSocket that follows a topic: GET /?after=N sends what came after N, then a message of
// none (the client is live), then every message as it is published. Between messages the
// connection holds no goroutine: its request waits on the topic. The client keeps the last
// cursor it was sent, and reconnects with it.
func ExampleFeed() {
	topic := wait.NewTopic[string](1000)
	feed := &websocket.Feed[string]{
		Topic: topic,
		Encode: func(b []byte, msgs []string, last uint64, _ error) []byte {
			out, _ := json.Marshal(map[string]any{"messages": msgs, "last": last})
			return append(b, out...)
		},
		CaughtUp: true,
	}
	events := &websocket.Events{} // the application's own: Message, Close, ...
	addr, stop := serve(func(cx *core.Ctx) {
		after, _ := strconv.ParseUint(cx.Query("after"), 10, 64)
		ws, err := websocket.Serve(cx, nil, events)
		if err != nil {
			return // refused, and answered with the reason
		}
		feed.Follow(cx, ws, after)
	})
	defer stop()

	topic.Publish("hello")
	c := dial(addr)
	defer c.conn.Close()
	fmt.Println(c.receive()) // what came after 0
	fmt.Println(c.receive()) // caught up
	topic.Publish("world")
	fmt.Println(c.receive())
	// Output:
	// {"last":1,"messages":["hello"]}
	// {"last":1,"messages":null}
	// {"last":2,"messages":["world"]}
}
