package interop

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/websocket"
)

// WebSocket over HTTP/2 (RFC 8441) against golang.org/x/net/http2's client, which sends an
// extended CONNECT once the server's SETTINGS allow it: the request's body and the response's
// are the two directions of the WebSocket, framed by this file's client from RFC 6455 (the
// frames of rawclient_test.go's).

// wsEchoH2 serves GET /ws: a WebSocket that echoes each message, until the client closes.
func wsEchoH2(c *core.Ctx) {
	ws, err := websocket.Accept(c, nil)
	if err != nil {
		return
	}
	for {
		typ, msg, err := ws.ReadMessage()
		if err != nil {
			return
		}
		if err := ws.WriteMessage(typ, msg); err != nil {
			return
		}
	}
}

// readWSFrame reads one unmasked server frame from r: its opcode and payload.
func readWSFrame(t *testing.T, r io.Reader) (op byte, payload []byte) {
	t.Helper()
	var h [10]byte
	if _, err := io.ReadFull(r, h[:2]); err != nil {
		t.Fatalf("reading a frame: %v", err)
	}
	n, hn := uint64(h[1]&0x7f), 2
	switch n {
	case 126:
		hn = 4
	case 127:
		hn = 10
	}
	if _, err := io.ReadFull(r, h[2:hn]); err != nil {
		t.Fatalf("reading a frame header: %v", err)
	}
	switch n {
	case 126:
		n = uint64(binary.BigEndian.Uint16(h[2:]))
	case 127:
		n = binary.BigEndian.Uint64(h[2:])
	}
	if h[0]&0x80 == 0 || h[1]&0x80 != 0 || n > 1<<20 {
		t.Fatalf("a frame not final, masked or over a megabyte: [% x]", h[:hn])
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		t.Fatalf("reading a frame's payload: %v", err)
	}
	return h[0] & 0x0f, payload
}

// TestH2WebSocketXnet: x/net's client opens /ws on its HTTP/2 connection (200, no
// Sec-WebSocket-Accept), a text and a 100 KB binary message come back whole — more than a
// stream window, so both directions' flow control is crossed — and a close is answered with
// a close and the stream's end. A plain GET of the same connection is served meanwhile.
func TestH2WebSocketXnet(t *testing.T) {
	s := serveH2(t)
	forEachPort(t, func(t *testing.T, secure bool) {
		var dials atomic.Int64
		rt := xnetH2C(s, &dials)
		if secure {
			rt = xnetTLS(s, &dials)
		}
		// The first request reads the server's SETTINGS: the client sends an extended CONNECT
		// only once they have allowed it.
		hello := getBody(t, rt, s.url(secure, "/hello"))
		if hello != helloBody("HTTP/2.0") {
			t.Fatalf("GET /hello: %q", hello)
		}
		ctx, cancel := context.WithTimeout(t.Context(), h2SafetyNet)
		defer cancel()
		pr, pw := io.Pipe()
		defer pw.Close()
		req, err := http.NewRequestWithContext(ctx, "CONNECT", s.url(secure, "/ws"), pr)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(":protocol", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatalf("extended CONNECT: %v", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 || resp.ProtoMajor != 2 || resp.Header.Get("Sec-WebSocket-Accept") != "" {
			t.Fatalf("answered %s over HTTP/%d, Sec-WebSocket-Accept %q", resp.Status, resp.ProtoMajor, resp.Header.Get("Sec-WebSocket-Accept"))
		}
		big := bytes.Repeat([]byte("0123456789"), 10_000)
		for i, f := range []wsFrame{text("hello over h2"), bin(big)} {
			go pw.Write(f.encode([4]byte{1, 2, 3, byte(i)}))
			op, p := readWSFrame(t, resp.Body)
			if op != f.op || !bytes.Equal(p, f.payload) {
				t.Fatalf("message %d: opcode %#x, %d bytes (want %#x, %d)", i, op, len(p), f.op, len(f.payload))
			}
			if i == 0 {
				// Another request beside the WebSocket, on the same connection.
				if got := getBody(t, rt, s.url(secure, "/hello")); got != hello {
					t.Fatalf("GET /hello beside the WebSocket: %q", got)
				}
			}
		}
		go func() {
			pw.Write(closeFrame(1000, "done").encode([4]byte{9, 9, 9, 9}))
			pw.Close() // END_STREAM: the client's side ends after its close
		}()
		op, p := readWSFrame(t, resp.Body)
		if op != opClose || len(p) < 2 || binary.BigEndian.Uint16(p) != 1000 {
			t.Fatalf("answer to the close: opcode %#x, payload %q", op, p)
		}
		if rest, err := io.ReadAll(resp.Body); err != nil || len(rest) != 0 {
			t.Fatalf("after the close: %d bytes, %v (want the stream's end)", len(rest), err)
		}
		if n := dials.Load(); n != 1 {
			t.Errorf("%d connections, want the one", n)
		}
	})
}

// getBody GETs url through rt and returns its body, failing the test on an error.
func getBody(t *testing.T, rt http.RoundTripper, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return string(b)
}
