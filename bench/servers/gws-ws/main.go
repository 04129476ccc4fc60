// Command gws-ws is the gws (github.com/lxzan/gws) peer of the WebSocket benchmarks: net/http's
// server with gws's upgrader, as its README runs it (Upgrade in the handler, ReadLoop on a
// goroutine of its own, OnMessage writing the echo), on the routes of package wspeer. The
// broadcast is its chat example's: one gws.Broadcaster per message, framed once, Broadcast to
// each connection, which queues the frame on the connection's write queue (written by a
// goroutine started for it; gws bounds neither the queue nor the time a write waits).
// permessage-deflate is accepted on /echo-deflate without context takeover either way (gws's
// default), messages of 512 bytes and more compressed at flate's best speed.
package main

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/bench/internal/wspeer"
	"github.com/lxzan/gws"
)

// echo answers every message with itself.
type echo struct{ gws.BuiltinEventHandler }

func (echo) OnMessage(socket *gws.Conn, message *gws.Message) {
	defer message.Close()
	socket.WriteMessage(message.Opcode, message.Bytes())
}

// room is the broadcast's connections.
type room struct {
	gws.BuiltinEventHandler
	mu    sync.Mutex
	conns map[*gws.Conn]struct{}
}

func (r *room) OnOpen(socket *gws.Conn) {
	r.mu.Lock()
	r.conns[socket] = struct{}{}
	r.mu.Unlock()
}

func (r *room) OnClose(socket *gws.Conn, err error) {
	r.mu.Lock()
	delete(r.conns, socket)
	r.mu.Unlock()
}

func (r *room) OnMessage(socket *gws.Conn, message *gws.Message) { message.Close() }

// send broadcasts payload to every connection, framed once.
func (r *room) send(payload []byte) {
	b := gws.NewBroadcaster(gws.OpcodeBinary, payload)
	defer b.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for c := range r.conns {
		b.Broadcast(c)
	}
}

func main() {
	addr := wspeer.ParseFlags()
	rm := &room{conns: map[*gws.Conn]struct{}{}}
	plain := gws.NewUpgrader(echo{}, nil)
	deflate := gws.NewUpgrader(echo{}, &gws.ServerOption{PermessageDeflate: gws.PermessageDeflate{Enabled: true}})
	bcast := gws.NewUpgrader(rm, nil)
	serve := func(up *gws.Upgrader) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			socket, err := up.Upgrade(w, r)
			if err != nil {
				return
			}
			go socket.ReadLoop()
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, wspeer.Hello)
	})
	mux.Handle("GET /echo", serve(plain))
	mux.Handle("GET /echo-deflate", serve(deflate))
	mux.Handle("GET /broadcast", serve(bcast))
	mux.HandleFunc("GET /start", func(w http.ResponseWriter, r *http.Request) {
		p, err := wspeer.ParsePlan(r.URL.Query().Get)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.Start(rm.send)
		io.WriteString(w, "ok")
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	peer.Ready(ln.Addr().String())
	peer.WaitForStop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
}
