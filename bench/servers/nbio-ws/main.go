// Command nbio-ws is the nbio (github.com/lesismal/nbio, nbhttp/websocket) peer of the WebSocket
// benchmarks: nbhttp's engine with its default non-blocking I/O (connections on its epoll
// poller, messages handled on its goroutine pool), upgraders as in nbio's examples, on the
// routes of package wspeer. nbio has no prepared message: the broadcast writes the message to
// each connection (WriteMessage frames it and writes at once, buffering what the socket does
// not take; a connection holding more than wspeer.QueueBytes so is closed,
// Config.MaxWriteBufferSize). permessage-deflate is accepted on /echo-deflate, which nbio
// speaks without context takeover only, every message compressed.
package main

import (
	"context"
	"io"
	"log"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/bench/internal/wspeer"
	"github.com/lesismal/nbio/nbhttp"
	"github.com/lesismal/nbio/nbhttp/websocket"
)

func echo(c *websocket.Conn, mt websocket.MessageType, data []byte) {
	c.WriteMessage(mt, data)
}

func main() {
	addr := wspeer.ParseFlags()
	var (
		mu    sync.Mutex
		conns = map[*websocket.Conn]struct{}{}
	)
	plain := websocket.NewUpgrader()
	plain.OnMessage(echo)
	deflate := websocket.NewUpgrader()
	deflate.EnableCompression(true)
	deflate.OnMessage(echo)
	bcast := websocket.NewUpgrader()
	bcast.OnOpen(func(c *websocket.Conn) {
		mu.Lock()
		conns[c] = struct{}{}
		mu.Unlock()
	})
	bcast.OnClose(func(c *websocket.Conn, err error) {
		mu.Lock()
		delete(conns, c)
		mu.Unlock()
	})
	bcast.OnMessage(func(*websocket.Conn, websocket.MessageType, []byte) {})
	send := func(payload []byte) {
		mu.Lock()
		defer mu.Unlock()
		for c := range conns {
			c.WriteMessage(websocket.BinaryMessage, payload)
		}
	}
	upgrade := func(u *websocket.Upgrader) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { u.Upgrade(w, r, nil) }
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		text(w, wspeer.Hello)
	})
	mux.Handle("GET /echo", upgrade(plain))
	mux.Handle("GET /echo-deflate", upgrade(deflate))
	mux.Handle("GET /broadcast", upgrade(bcast))
	mux.HandleFunc("GET /start", func(w http.ResponseWriter, r *http.Request) {
		p, err := wspeer.ParsePlan(r.URL.Query().Get)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.Start(send)
		text(w, "ok")
	})
	engine := nbhttp.NewEngine(nbhttp.Config{
		Network:                 "tcp",
		Addrs:                   []string{addr},
		Handler:                 mux,
		ReleaseWebsocketPayload: true,
		MaxWriteBufferSize:      wspeer.QueueBytes,
	})
	if err := engine.Start(); err != nil {
		log.Fatal(err)
	}
	peer.Ready(addr)
	peer.WaitForStop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	engine.Shutdown(ctx)
}

// text writes a short text/plain body with its length (nbhttp would otherwise send it chunked).
func text(w http.ResponseWriter, s string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain")
	h.Set("Content-Length", strconv.Itoa(len(s)))
	io.WriteString(w, s)
}
