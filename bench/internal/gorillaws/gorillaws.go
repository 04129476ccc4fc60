// Package gorillaws is gorilla/websocket's side of the WebSocket benchmarks, written as its
// examples are, for the two servers that run it: servers/gorilla-ws on net/http's server, and
// servers/dwell-ws -style bridge on dwell through router.HandleHTTP (package nethttp's Hijack).
//
// The echo is gorilla's examples/echo: ReadMessage, then WriteMessage, on the handler's
// goroutine. The broadcast is its examples/chat hub: a writer goroutine per connection fed by
// a channel of wspeer.QueueMessages messages, prepared once per tick (NewPreparedMessage), the
// handler's goroutine reading what the client sends; a client whose channel is full is closed.
package gorillaws

import (
	"io"
	"net/http"
	"sync"

	"github.com/dwellhttp/dwell/bench/internal/wspeer"
	"github.com/gorilla/websocket"
)

// plain and deflate upgrade with gorilla's defaults (the hijacked connection's bufio buffers
// reused, no origin check for clients that send no Origin), deflate accepting
// permessage-deflate, which gorilla only speaks without context takeover, at its default
// level (1, best speed), every message compressed.
var (
	plain   = websocket.Upgrader{}
	deflate = websocket.Upgrader{EnableCompression: true}
)

// Echo returns the echo handler, with compression accepted or not.
func Echo(compress bool) http.Handler {
	up := &plain
	if compress {
		up = &deflate
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return // Upgrade has answered
		}
		defer c.Close()
		for {
			mt, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if err := c.WriteMessage(mt, msg); err != nil {
				return
			}
		}
	})
}

// A Hub is the broadcast's set of connections.
type Hub struct {
	mu      sync.Mutex
	clients map[*client]struct{}
}

// client is one member: the connection and its writer's queue.
type client struct {
	c    *websocket.Conn
	send chan *websocket.PreparedMessage
}

// NewHub returns an empty hub.
func NewHub() *Hub {
	return &Hub{clients: map[*client]struct{}{}}
}

// ServeHTTP upgrades a connection and keeps it in the hub until it closes.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, err := plain.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	cl := &client{c: c, send: make(chan *websocket.PreparedMessage, wspeer.QueueMessages)}
	h.mu.Lock()
	h.clients[cl] = struct{}{}
	h.mu.Unlock()
	go cl.write()
	for {
		_, rd, err := c.NextReader()
		if err != nil {
			break
		}
		io.Copy(io.Discard, rd)
	}
	h.drop(cl)
	c.Close()
}

// write sends the client its queue until the hub closes it or a write fails.
func (cl *client) write() {
	for pm := range cl.send {
		if err := cl.c.WritePreparedMessage(pm); err != nil {
			break
		}
	}
	cl.c.Close()
}

// drop takes cl out of the hub and closes its queue, once.
func (h *Hub) drop(cl *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropLocked(cl)
}

func (h *Hub) dropLocked(cl *client) {
	if _, ok := h.clients[cl]; ok {
		delete(h.clients, cl)
		close(cl.send)
	}
}

// Send broadcasts payload as one binary message, framed once, to every member; a member whose
// queue is full is dropped and closed.
func (h *Hub) Send(payload []byte) {
	pm, err := websocket.NewPreparedMessage(websocket.BinaryMessage, payload)
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for cl := range h.clients {
		select {
		case cl.send <- pm:
		default:
			h.dropLocked(cl)
		}
	}
}
