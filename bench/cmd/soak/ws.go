package main

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/gorilla/websocket"
)

// echoWebSocket opens a WebSocket (event style or sequential, at random), sends it up to 200
// messages of either type — one in twenty up to 200 KB — checking each echo, and closes it with
// a close handshake or, half the time, by dropping the connection.
func echoWebSocket(ctx context.Context, t *tally, addr string) {
	path := "/ws"
	if rand.IntN(2) == 0 {
		path = "/ws/seq"
	}
	c, _, err := websocket.DefaultDialer.Dial("ws://"+addr+path, nil)
	if err != nil {
		t.fail("WebSocket "+path+": dial", err)
		return
	}
	defer c.Close()
	for range rand.IntN(200) {
		if ctx.Err() != nil {
			return
		}
		msg := make([]byte, rand.IntN(2000))
		if rand.IntN(20) == 0 {
			msg = make([]byte, rand.IntN(200<<10))
		}
		typ := websocket.BinaryMessage
		if rand.IntN(2) == 0 {
			typ = websocket.TextMessage
			for i := range msg {
				msg[i] = byte('a' + rand.IntN(26))
			}
		} else {
			for i := range msg {
				msg[i] = byte(rand.IntN(256))
			}
		}
		if err := c.WriteMessage(typ, msg); err != nil {
			wsFailed(t, path+": write", err)
			return
		}
		got, m, err := c.ReadMessage()
		if err != nil {
			wsFailed(t, path+": read", err)
			return
		}
		if got != typ || !bytes.Equal(m, msg) {
			t.fail("WebSocket "+path, errors.New("the echo differs"))
			return
		}
		t.ok.Add(1)
	}
	if rand.IntN(2) == 0 {
		return // dropped
	}
	c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			if !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
				wsFailed(t, path+": close", err)
			}
			return
		}
	}
}

// wsFailed counts a WebSocket's failure, but for a shutdown's close (1001) during a shutdown.
func wsFailed(t *tally, what string, err error) {
	if t.shutdown() && websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.expect("WebSockets closed by the shutdown (1001)")
		return
	}
	t.fail("WebSocket "+what, err)
}
