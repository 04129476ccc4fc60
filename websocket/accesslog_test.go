package websocket

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// lines sends each line a slog.JSONHandler writes on a channel, for the test to wait for.
type lines chan []byte

func (l lines) Write(p []byte) (int, error) {
	l <- append([]byte(nil), p...)
	return len(p), nil
}

// TestAccessLogClose: the access line of a WebSocket served in the sequential style, whose
// handler reads until the connection ends, marks an error only when the end was not the
// normal one. A close handshake completed — the client's close answered, or the server's
// answered by the client — is no error, whatever the code; a client gone without a close frame,
// a connection failed for the client's frame and a close the client never answered are.
func TestAccessLogClose(t *testing.T) {
	out := make(lines, 4)
	logger := slog.New(slog.NewJSONHandler(out, nil))
	handler := func(o *Options) core.Handler {
		return middleware.AccessLog(logger)(func(cx *core.Ctx) {
			c, err := Accept(cx, o)
			if err != nil {
				return
			}
			for {
				_, msg, err := c.ReadMessage()
				if err != nil {
					return
				}
				if string(msg) == "close please" {
					c.Close(CloseNormal, "as asked")
				}
			}
		})
	}
	addr := serve(t, handler(nil))
	// A close the client does not answer ends at once there.
	impatient := serve(t, handler(&Options{CloseTimeout: 1}))

	for _, tc := range []struct {
		name      string
		end       func(c *client)
		err       string // the line's error, "" for none
		impatient bool
	}{
		{"the client closes with 1000", func(c *client) {
			c.send(frame.Close, closePayload(CloseNormal, "done"))
			c.expectClose(CloseNormal)
		}, "", false},
		{"the client closes going away", func(c *client) {
			c.send(frame.Close, closePayload(CloseGoingAway, ""))
			c.expectClose(CloseGoingAway)
		}, "", false},
		{"the client closes with no code", func(c *client) {
			c.send(frame.Close, "")
			c.readClose(0)
			c.ExpectEOF()
			c.TCPConn.Close()
		}, "", false},
		{"the server closes, the client answers", func(c *client) {
			c.send(frame.Text, "close please")
			c.answerClose(CloseNormal)
		}, "", false},
		{"the client vanishes", func(c *client) {
			c.TCPConn.Close()
		}, core.ErrClosed.Error(), false},
		{"the client breaks the protocol", func(c *client) {
			c.write(c.frameBytes(frame.Text, []byte("unmasked"), true, false, true))
			c.expectClose(CloseProtocolError)
		}, "websocket: closed by the server with 1002", false},
		{"the client does not answer the server's close", func(c *client) {
			c.send(frame.Text, "close please")
			c.readClose(CloseNormal)
			c.ExpectEOF()
			c.TCPConn.Close()
		}, errCloseTimeout.Error(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := addr
			if tc.impatient {
				a = impatient
			}
			c, _ := dial(t, a)
			c.send(frame.Text, "hello")
			tc.end(c)
			var line struct {
				Status int     `json:"status"`
				Err    *string `json:"error"`
			}
			b := coretest.Receive(t, "the access line", out)
			if err := json.Unmarshal(b, &line); err != nil {
				t.Fatalf("%v: %s", err, b)
			}
			got := ""
			if line.Err != nil {
				got = *line.Err
			}
			switch {
			case line.Status != 101:
				t.Errorf("status %d: %s", line.Status, b)
			case tc.err == "" && line.Err != nil:
				t.Errorf("a normal close logged as an error: %s", b)
			case tc.err != "" && !strings.HasPrefix(got, tc.err):
				t.Errorf("error %q, want %q: %s", got, tc.err, b)
			}
		})
	}
}
