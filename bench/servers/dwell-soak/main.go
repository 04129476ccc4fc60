// Command dwell-soak is the server cmd/soak drives: a route for every kind of exchange dwell
// serves — a hello, an echo of the request body (and through the net/http bridge), streamed
// responses (and through the bridge), blocking work (wait.Do, wait.Call), a sleep, a Detach, a
// long poll on a topic with a cursor, a file with ranges, WebSockets in both styles — and /stats,
// what the server holds; HTTPS with -cert and -key (peer.TLSFlags). It prints "listening ADDR"
// once it listens, logs at Warn (Debug with -debug) to its standard error, and on SIGTERM shuts
// down with a grace period of -grace (10 s), printing what Shutdown and ListenAndServe returned.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/router"
	"github.com/dwellhttp/dwell/wait"
	"github.com/dwellhttp/dwell/websocket"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "TCP address to listen on")
	file := flag.String("file", "", "file served at /file (required)")
	loops := flag.Int("loops", 2, "Options.Loops")
	maxConns := flag.Int("maxconns", 0, "Options.MaxConns")
	tf := peer.RegisterTLSFlags()
	debug := flag.Bool("debug", false, "log at Debug")
	grace := flag.Duration("grace", 10*time.Second, "the shutdown's grace period, after SIGTERM")
	flag.Parse()
	if *file == "" {
		log.Fatal("-file is required")
	}
	level := slog.LevelWarn
	if *debug {
		level = slog.LevelDebug
	}
	opts := core.Options{Addr: *addr, Loops: *loops, MaxConns: *maxConns,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))}
	if tf.Enabled() {
		opts.TLSConfig = tf.Config()
	}
	var srv *core.Server
	srv = core.NewServer(routes(*file, func() core.Stats { return srv.Stats() }), opts)
	if err := srv.Listen(); err != nil {
		log.Fatal(err)
	}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM)
		<-sig
		ctx, cancel := context.WithTimeout(context.Background(), *grace)
		defer cancel()
		fmt.Fprintln(os.Stderr, "shutdown:", srv.Shutdown(ctx))
	}()
	fmt.Println("listening", srv.Addr())
	var err error
	if tf.Enabled() {
		err = srv.ListenAndServeTLS(tf.Cert, tf.Key)
	} else {
		err = srv.ListenAndServe()
	}
	fmt.Fprintln(os.Stderr, "served:", err)
}

// routes are the soak's exchanges; the topic behind /poll gets a value every 5 ms.
func routes(file string, stats func() core.Stats) core.Handler {
	topic := wait.NewTopic[uint64](1024)
	go func() {
		for i := uint64(1); ; i++ {
			topic.Publish(i)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	r := router.New()
	r.GET("/hello", func(c *core.Ctx) { c.WriteString("hello") })
	r.POST("/echo", func(c *core.Ctx) {
		buf := make([]byte, 32<<10)
		var out []byte
		for {
			n, err := c.ReadBody(buf)
			out = append(out, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				return
			}
		}
		c.SetHeader("Content-Length", strconv.Itoa(len(out)))
		c.Write(out)
	})
	r.HandleHTTP("POST", "/std/echo", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, err := io.ReadAll(r.Body); err == nil {
			w.Write(b)
		}
	}))
	r.GET("/stream", func(c *core.Ctx) {
		n, _ := strconv.Atoi(c.Query("n"))
		streamed(n, c.Write, c.Flush)
	})
	r.HandleHTTP("GET", "/std/stream", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		streamed(n, w.Write, func() error { w.(http.Flusher).Flush(); return nil })
	}))
	r.HandleHTTP("GET", "/std/hello", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	}))
	r.GET("/do", func(c *core.Ctx) {
		d := millis(c.Query("ms"))
		if wait.Do(c, func() { time.Sleep(d) }) == nil {
			c.WriteString("done")
		}
	})
	r.GET("/call", func(c *core.Ctx) {
		v, err := wait.Call(c, func(ctx context.Context) (string, error) {
			select {
			case <-time.After(3 * time.Millisecond):
				return "called", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
		if err == nil {
			c.WriteString(v)
		}
	})
	r.GET("/sleep", func(c *core.Ctx) {
		wait.Sleep(c, millis(c.Query("ms")))
		c.WriteString("slept")
	})
	r.GET("/detach", func(c *core.Ctx) {
		c.Detach(millis(c.Query("ms")), func(c *core.Ctx, err error) { c.WriteString("detached") })
	})
	r.GET("/poll", func(c *core.Ctx) {
		after, _ := strconv.ParseUint(c.Query("after"), 10, 64)
		vs, next, err := topic.Next(c, after, 2*time.Second)
		c.SetHeader("X-Next", strconv.FormatUint(next, 10))
		if err != nil && len(vs) == 0 {
			c.SetStatus(204)
			return
		}
		b, _ := json.Marshal(vs)
		c.Write(b)
	})
	r.GET("/file", func(c *core.Ctx) { body.ServeFile(c, file) })
	echo := &websocket.Events{Message: func(c *websocket.Conn, typ websocket.MessageType, data []byte) { c.Send(typ, data) }}
	r.GET("/ws", func(c *core.Ctx) { websocket.Serve(c, nil, echo) })
	r.GET("/ws/seq", func(c *core.Ctx) {
		ws, err := websocket.Accept(c, nil)
		if err != nil {
			return
		}
		for {
			typ, m, err := ws.ReadMessage()
			if err != nil || ws.WriteMessage(typ, m) != nil {
				return
			}
		}
	})
	r.GET("/stats", func(c *core.Ctx) {
		var st core.Stats
		var ms runtime.MemStats
		var goroutines int
		if wait.Do(c, func() {
			runtime.GC()
			st = stats()
			runtime.ReadMemStats(&ms)
			goroutines = runtime.NumGoroutine()
		}) != nil {
			return
		}
		b, _ := json.Marshal(map[string]any{"conns": st.Total.Conns, "goroutines": goroutines,
			"heap": ms.HeapInuse, "requests": st.Total.Requests, "panics": st.Total.Panics})
		c.Write(b)
	})
	return r.Handler()
}

// streamed writes n KiB, byte i+j of KiB i being 'a'+(i+j)%26 (cmd/soak checks them), flushing
// every 8 KiB.
func streamed(n int, write func([]byte) (int, error), flush func() error) {
	chunk := make([]byte, 1024)
	for i := range n {
		for j := range chunk {
			chunk[j] = byte('a' + (i+j)%26)
		}
		if _, err := write(chunk); err != nil {
			return
		}
		if i%8 == 7 && flush() != nil {
			return
		}
	}
}

func millis(q string) time.Duration {
	n, _ := strconv.Atoi(q)
	return time.Duration(n) * time.Millisecond
}
