package websocket_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/websocket"
)

// serve runs h on a free loopback port and returns its address and a stop function.
func serve(h core.Handler) (string, func()) {
	s := core.NewServer(h, core.Options{Addr: "127.0.0.1:0"})
	if err := s.Listen(); err != nil {
		panic(err)
	}
	go s.ListenAndServe()
	return s.Addr().String(), func() { s.Shutdown(context.Background()) }
}

// client is the least of a WebSocket client, for the examples: an upgrade, masked text frames
// of under 126 bytes out, unfragmented ones in. Use a WebSocket library for a real one.
type client struct {
	conn net.Conn
	r    *bufio.Reader
}

func dial(addr string) *client {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", addr)
	c := &client{conn: conn, r: bufio.NewReader(conn)}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		panic(fmt.Sprint("upgrade: ", resp.Status, err))
	}
	return c
}

func (c *client) send(text string) {
	mask := [4]byte{1, 2, 3, 4}
	b := append([]byte{0x81, 0x80 | byte(len(text))}, mask[:]...)
	for i := range len(text) {
		b = append(b, text[i]^mask[i%4])
	}
	c.conn.Write(b)
}

func (c *client) receive() string {
	var h [2]byte
	if _, err := io.ReadFull(c.r, h[:]); err != nil {
		return err.Error()
	}
	b := make([]byte, h[1]&0x7f)
	io.ReadFull(c.r, b)
	return string(b)
}

// The sequential style: the handler reads and writes as blocking-looking calls that park only
// itself while they wait.
func ExampleAccept() {
	addr, stop := serve(func(cx *core.Ctx) {
		ws, err := websocket.Accept(cx, nil)
		if err != nil {
			return // refused, and answered with the reason
		}
		for {
			typ, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if err := ws.WriteMessage(typ, append([]byte("echo: "), msg...)); err != nil {
				return
			}
		}
	})
	defer stop()

	c := dial(addr)
	defer c.conn.Close()
	c.send("hello")
	fmt.Println(c.receive())
	c.send("again")
	fmt.Println(c.receive())
	// Output:
	// echo: hello
	// echo: again
}

// The event style: the handler returns at once, and the callbacks run on the loop; a message
// is broadcast to every member of a group, framed once.
func ExampleServe() {
	var room websocket.Group
	joined := make(chan struct{}, 2)
	events := &websocket.Events{
		Open: func(ws *websocket.Conn) {
			room.Add(ws)
			joined <- struct{}{}
		},
		Message: func(ws *websocket.Conn, typ websocket.MessageType, data []byte) {
			room.Broadcast(websocket.NewPreparedMessage(typ, data)) // copies data, which is lent
		},
	}
	addr, stop := serve(func(cx *core.Ctx) { websocket.Serve(cx, nil, events) })
	defer stop()

	alice, bob := dial(addr), dial(addr)
	defer alice.conn.Close()
	defer bob.conn.Close()
	<-joined
	<-joined
	alice.send("hi, all")
	fmt.Println("alice got:", alice.receive())
	fmt.Println("bob got:", bob.receive())
	// Output:
	// alice got: hi, all
	// bob got: hi, all
}

// Send says what became of a message, at once: queued, queued past the high-water mark (the
// sender should hold back), dropped by the slow-client policy, or too late.
func ExampleConn_Send() {
	results := make(chan websocket.SendResult, 1)
	addr, stop := serve(func(cx *core.Ctx) {
		websocket.Serve(cx, nil, &websocket.Events{
			Message: func(ws *websocket.Conn, typ websocket.MessageType, data []byte) {
				results <- ws.Send(typ, data)
			},
		})
	})
	defer stop()

	c := dial(addr)
	defer c.conn.Close()
	c.send("ping")
	fmt.Println(c.receive(), <-results)
	// Output:
	// ping queued
}
