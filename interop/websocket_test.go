package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	coder "github.com/coder/websocket"
	"github.com/gorilla/websocket"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/nethttp"
	"github.com/dwellhttp/dwell/router"
)

// closeCode and closeReason are what the echo handlers close with when a client sends "bye".
const (
	closeCode   = 4001
	closeReason = "echo done"
)

// megabyte is the large message of the round trips: far over the libraries' buffers, the
// bridge's and the connection's high-water mark.
var megabyte = func() []byte {
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}()

// serveWS serves h at /ws, mounted on a dwell router as net/http handlers are, for the length of
// the test, and returns the WebSocket URL.
func serveWS(t testing.TB, h http.Handler) string {
	t.Helper()
	r := router.New()
	r.HandleHTTP("GET", "/ws", h)
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})
	return "ws://" + addr + "/ws"
}

// gorillaEcho is gorilla/websocket's echo server: every message back as it came, until the
// client sends "bye", which it answers with a close of its own.
func gorillaEcho(t testing.TB) http.Handler {
	up := websocket.Upgrader{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			t.Errorf("Upgrade: %v", err)
			return
		}
		defer c.Close()
		for {
			mt, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if string(msg) == "bye" {
				c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(closeCode, closeReason),
					time.Now().Add(coretest.Patience))
				continue // the client's close comes next, and ends ReadMessage
			}
			if err := c.WriteMessage(mt, msg); err != nil {
				return
			}
		}
	})
}

// TestGorilla: gorilla/websocket's Upgrader behind the bridge passes its own client's round
// trips: text and binary messages, a 1 MiB one, a ping answered with its pong, and a close
// whose code and reason the client sees.
func TestGorilla(t *testing.T) {
	url := serveWS(t, gorillaEcho(t))
	c, resp, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake: %d", resp.StatusCode)
	}
	c.SetReadDeadline(time.Now().Add(coretest.Patience))
	roundTrip := func(mt int, msg []byte) {
		t.Helper()
		if err := c.WriteMessage(mt, msg); err != nil {
			t.Fatalf("WriteMessage: %v", err)
		}
		gotType, got, err := c.ReadMessage()
		if err != nil || gotType != mt || !bytes.Equal(got, msg) {
			t.Fatalf("echo of a %d-byte message of type %d: type %d, %d bytes, %v", len(msg), mt, gotType, len(got), err)
		}
	}
	for i := range 5 {
		roundTrip(websocket.TextMessage, []byte(strings.Repeat("text ", i+1)))
		roundTrip(websocket.BinaryMessage, []byte{0, byte(i), 0xff})
	}
	roundTrip(websocket.BinaryMessage, megabyte)

	pong := make(chan string, 1)
	c.SetPongHandler(func(data string) error { pong <- data; return nil })
	if err := c.WriteControl(websocket.PingMessage, []byte("are you there"), time.Now().Add(coretest.Patience)); err != nil {
		t.Fatal(err)
	}
	roundTrip(websocket.TextMessage, []byte("after the ping")) // its read handles the pong
	if got := coretest.Receive(t, "the pong", pong); got != "are you there" {
		t.Errorf("pong %q", got)
	}

	if err := c.WriteMessage(websocket.TextMessage, []byte("bye")); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != closeCode || ce.Text != closeReason {
		t.Fatalf("after bye: %v, want a close %d %q", err, closeCode, closeReason)
	}
}

// coderEcho is coder/websocket's echo server, reading with r.Context() as its examples do: the
// request's context must outlive the hijack.
func coderEcho(t testing.TB) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := coder.Accept(w, r, nil)
		if err != nil {
			t.Errorf("Accept: %v", err)
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(2 << 20)
		ctx := r.Context()
		for {
			typ, msg, err := c.Read(ctx)
			if err != nil {
				return
			}
			if string(msg) == "bye" {
				c.Close(closeCode, closeReason)
				return
			}
			if err := c.Write(ctx, typ, msg); err != nil {
				return
			}
		}
	})
}

// TestCoder: coder/websocket's Accept behind the bridge (it calls WriteHeader(101) before it
// hijacks) passes its own client's round trips, as TestGorilla's.
func TestCoder(t *testing.T) {
	url := serveWS(t, coderEcho(t))
	ctx, cancel := context.WithTimeout(t.Context(), coretest.Patience)
	defer cancel()
	c, resp, err := coder.Dial(ctx, url, nil)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.CloseNow()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake: %d", resp.StatusCode)
	}
	c.SetReadLimit(2 << 20)
	roundTrip := func(typ coder.MessageType, msg []byte) {
		t.Helper()
		if err := c.Write(ctx, typ, msg); err != nil {
			t.Fatalf("Write: %v", err)
		}
		gotType, got, err := c.Read(ctx)
		if err != nil || gotType != typ || !bytes.Equal(got, msg) {
			t.Fatalf("echo of a %d-byte message of type %v: type %v, %d bytes, %v", len(msg), typ, gotType, len(got), err)
		}
	}
	for i := range 5 {
		roundTrip(coder.MessageText, []byte(strings.Repeat("text ", i+1)))
		roundTrip(coder.MessageBinary, []byte{0, byte(i), 0xff})
	}
	roundTrip(coder.MessageBinary, megabyte)

	// Ping waits for its pong, which only a Read of the client's own takes in.
	pinged := make(chan error, 1)
	go func() { pinged <- c.Ping(ctx) }()
	for {
		roundTrip(coder.MessageText, []byte("while pinging"))
		select {
		case err := <-pinged:
			if err != nil {
				t.Fatalf("Ping: %v", err)
			}
		default:
			continue
		}
		break
	}

	if err := c.Write(ctx, coder.MessageText, []byte("bye")); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Read(ctx)
	var ce coder.CloseError
	if !errors.As(err, &ce) || ce.Code != closeCode || ce.Reason != closeReason {
		t.Fatalf("after bye: %v, want a close %d %q", err, closeCode, closeReason)
	}
}

// TestIdleWebSocketsHoldNoPlace: idle gorilla/websocket connections, each with its handler's
// goroutine waiting in ReadMessage, hold no place in the bridge's pool: with 4 places and 50 of
// them open, another bridged route still answers, and every connection still echoes.
func TestIdleWebSocketsHoldNoPlace(t *testing.T) {
	nethttp.SetWorkers(4)
	t.Cleanup(func() { nethttp.SetWorkers(0) }) // after the server has stopped
	r := router.New()
	r.HandleHTTP("GET", "/ws", gorillaEcho(t))
	r.HandleHTTP("GET", "/plain", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("still here"))
	}))
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})
	var conns []*websocket.Conn
	for range 50 {
		c, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/ws", nil)
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(coretest.Patience))
		conns = append(conns, c)
	}
	client := &http.Client{Timeout: coretest.Patience}
	resp, err := client.Get("http://" + addr + "/plain")
	if err != nil {
		t.Fatalf("GET /plain with 50 idle WebSockets: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "still here" {
		t.Fatalf("GET /plain: %d %q", resp.StatusCode, body)
	}
	for i, c := range conns {
		msg := []byte(fmt.Sprint("message ", i))
		if err := c.WriteMessage(websocket.TextMessage, msg); err != nil {
			t.Fatal(err)
		}
		if _, got, err := c.ReadMessage(); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("connection %d echoed %q (%v)", i, got, err)
		}
	}
}
