// Command probe serves one HTTP/1.1 request, one HTTP/2 stream's request or one WebSocket
// message with dwell, built with coverage (see ../main.go), and writes the coverage counters of
// that exchange alone: a first exchange warms the connection up, the counters are cleared, the
// second is made, and they are written to the directory named. A WebSocket's message is echoed
// in the event style (ws: websocket.Serve, the echo sent from Events.Message, as make bench's
// echo is) or in the sequential style (ws-seq: a handler's ReadMessage and WriteMessage).
//
//	probe h1|h2|ws|ws-seq DIR
package main

import (
	"bufio"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/coverage"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/websocket"
)

// echoEvents answer every message with itself, from the loop.
var echoEvents = &websocket.Events{
	Message: func(c *websocket.Conn, typ websocket.MessageType, data []byte) { c.Send(typ, data) },
}

// handler answers "hello", or echoes a WebSocket's messages: at /ws in the event style, at
// /ws-seq in the sequential one.
func handler(c *core.Ctx) {
	switch c.Path() {
	case "/ws":
		websocket.Serve(c, nil, echoEvents)
		return
	case "/ws-seq":
	default:
		c.WriteString("hello")
		return
	}
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
}

func main() {
	if len(os.Args) != 3 {
		log.Fatal("usage: probe h1|h2|ws|ws-seq DIR")
	}
	// The stall watchdog is off: a goroutine of its own that wakes on a clock, not for the
	// exchange, it would count its files or not depending on when it ran. The loop marks its
	// turns for it all the same.
	s := core.NewServer(handler, core.Options{Addr: "127.0.0.1:0", Loops: 1, StallThreshold: -1,
		Logger: slog.New(slog.DiscardHandler)})
	if err := s.Listen(); err != nil {
		log.Fatal(err)
	}
	go s.ListenAndServe()
	addr := s.Addr().String()
	var exchange func()
	switch os.Args[1] {
	case "h1":
		exchange = h1(addr)
	case "h2":
		exchange = h2(addr)
	case "ws", "ws-seq":
		exchange = ws(addr, "/"+os.Args[1])
	default:
		log.Fatal("usage: probe h1|h2|ws|ws-seq DIR")
	}
	exchange()
	settle()
	if err := coverage.ClearCounters(); err != nil {
		log.Fatal(err)
	}
	exchange()
	settle()
	dir := os.Args[2]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	if err := coverage.WriteMetaDir(dir); err != nil {
		log.Fatal(err)
	}
	if err := coverage.WriteCountersDir(dir); err != nil {
		log.Fatal(err)
	}
}

// settle lets the server finish what follows an answer the client has already read (the
// request's end, the connection's wait for the next one) before the counters are touched.
func settle() { time.Sleep(200 * time.Millisecond) }

func h1(addr string) func() {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	br := bufio.NewReader(c)
	return func() {
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: h\r\n\r\n"); err != nil {
			log.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			log.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func h2(addr string) func() {
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true) // HTTP/2 with prior knowledge, over plaintext
	cl := &http.Client{Transport: &http.Transport{Protocols: &h2c}}
	return func() {
		resp, err := cl.Get("http://" + addr + "/")
		if err != nil {
			log.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func ws(addr, path string) func() {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		log.Fatal("the upgrade: ", err)
	}
	return func() {
		// A masked text frame "hello", which the server echoes unmasked: 2 + 5 bytes.
		c.Write([]byte{0x81, 0x85, 1, 2, 3, 4, 'h' ^ 1, 'e' ^ 2, 'l' ^ 3, 'l' ^ 4, 'o' ^ 1})
		if _, err := io.ReadFull(br, make([]byte, 7)); err != nil {
			log.Fatal(err)
		}
	}
}
