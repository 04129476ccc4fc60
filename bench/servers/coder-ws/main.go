// Command coder-ws is the coder/websocket peer of the WebSocket benchmarks: net/http's server
// with coder's examples on the routes of package wspeer. The echo is its examples/echo (Reader,
// Writer, io.Copy); the broadcast its examples/chat: each connection's handler writes what a
// channel of wspeer.QueueMessages messages brings, with a 5 s timeout per write, CloseRead
// reading the client's side, and a client whose channel is full is closed with 1008.
// permessage-deflate is accepted on /echo-deflate in coder's CompressionNoContextTakeover mode
// (messages of 512 bytes and more compressed, at flate's best speed).
package main

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/bench/internal/wspeer"
)

var (
	plain   = &websocket.AcceptOptions{}
	deflate = &websocket.AcceptOptions{CompressionMode: websocket.CompressionNoContextTakeover}
)

func main() {
	addr := wspeer.ParseFlags()
	var hub hub
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, wspeer.Hello)
	})
	mux.Handle("GET /echo", echo(plain))
	mux.Handle("GET /echo-deflate", echo(deflate))
	mux.HandleFunc("GET /broadcast", hub.serve)
	mux.HandleFunc("GET /start", func(w http.ResponseWriter, r *http.Request) {
		p, err := wspeer.ParsePlan(r.URL.Query().Get)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.Start(hub.publish)
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

// echo sends every message back as it came, streamed from its reader to a writer.
func echo(o *websocket.AcceptOptions) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, o)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		for {
			typ, rd, err := c.Reader(ctx)
			if err != nil {
				return
			}
			wr, err := c.Writer(ctx, typ)
			if err != nil {
				return
			}
			if _, err := io.Copy(wr, rd); err != nil {
				return
			}
			if err := wr.Close(); err != nil {
				return
			}
		}
	})
}

// hub is the broadcast's subscribers, as in coder's chat example.
type hub struct {
	mu   sync.Mutex
	subs map[*subscriber]struct{}
}

type subscriber struct {
	msgs      chan []byte
	closeSlow func()
	once      sync.Once // the example closes on every message that finds the queue full; once is enough
}

func (h *hub) serve(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, plain)
	if err != nil {
		return
	}
	defer c.CloseNow()
	s := &subscriber{
		msgs:      make(chan []byte, wspeer.QueueMessages),
		closeSlow: func() { c.Close(websocket.StatusPolicyViolation, "connection too slow to keep up with messages") },
	}
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[*subscriber]struct{}{}
	}
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.subs, s)
		h.mu.Unlock()
	}()
	ctx := c.CloseRead(context.Background())
	for {
		select {
		case msg := <-s.msgs:
			if err := writeTimeout(ctx, 5*time.Second, c, msg); err != nil {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

func writeTimeout(ctx context.Context, d time.Duration, c *websocket.Conn, msg []byte) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return c.Write(ctx, websocket.MessageBinary, msg)
}

// publish queues msg for every subscriber; one whose queue is full is closed.
func (h *hub) publish(msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.msgs <- msg:
		default:
			go s.once.Do(s.closeSlow)
		}
	}
}
