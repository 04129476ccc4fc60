package websocket

import (
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// TestHandshakeRefused: a request that is not a valid opening handshake (RFC 6455 §4.2.1) gets
// an ordinary HTTP answer saying why, and the connection stays HTTP's.
func TestHandshakeRefused(t *testing.T) {
	valid := upgradeRequest("/")
	without := func(field string) string {
		var keep []string
		for _, l := range strings.Split(valid, "\r\n") {
			if !strings.HasPrefix(l, field+":") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\r\n")
	}
	replace := func(old, new string) string { return strings.Replace(valid, old, new, 1) }
	cases := []struct {
		name, req string
		status    int
		header    string // a field the answer must have, "Name: value"
	}{
		{"POST", replace("GET", "POST"), 405, "Allow: GET"},
		{"HTTP/1.0", replace("HTTP/1.1", "HTTP/1.0"), 400, ""},
		{"no Upgrade", without("Upgrade"), 426, "Sec-Websocket-Version: 13"},
		{"Upgrade: h2c", replace("Upgrade: websocket", "Upgrade: h2c"), 426, "Upgrade: websocket"},
		{"no Connection", without("Connection"), 400, ""},
		{"Connection: keep-alive", replace("Connection: Upgrade", "Connection: keep-alive"), 400, ""},
		{"version 8", replace("Version: 13", "Version: 8"), 426, "Sec-Websocket-Version: 13"},
		{"no version", without("Sec-WebSocket-Version"), 426, "Sec-Websocket-Version: 13"},
		{"no key", without("Sec-WebSocket-Key"), 400, ""},
		{"short key", replace(testKey, "dGhlIHNhbXBsZQ=="), 400, ""},
		{"key not base64", replace(testKey, "!!!!!!!!!!!!!!!!!!!!!!=="), 400, ""},
		{"two keys", replace("\r\n\r\n", "\r\nSec-WebSocket-Key: "+testKey+"\r\n\r\n"), 400, ""},
		{"a body", replace("\r\n\r\n", "\r\nContent-Length: 2\r\n\r\nhi"), 400, ""},
		{"another origin", replace("\r\n\r\n", "\r\nOrigin: https://evil.example\r\n\r\n"), 403, ""},
		{"malformed extensions", replace("\r\n\r\n", "\r\nSec-WebSocket-Extensions: permessage-deflate; =x\r\n\r\n"), 400, ""},
	}
	addr := serve(t, echo(&Options{Compress: true}))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := coretest.Dial(t, addr)
			c.Send(tc.req)
			resp, body := c.Response("GET")
			if resp.StatusCode != tc.status {
				t.Fatalf("answered %d %q, want %d", resp.StatusCode, body, tc.status)
			}
			if !strings.HasPrefix(body, "websocket: ") {
				t.Errorf("body %q does not say why", body)
			}
			if name, value, ok := strings.Cut(tc.header, ": "); ok && resp.Header.Get(name) != value {
				t.Errorf("%s: %q, want %q", name, resp.Header.Get(name), value)
			}
			if resp.Header.Get("Sec-WebSocket-Accept") != "" {
				t.Error("a refused upgrade carries Sec-WebSocket-Accept")
			}
			// RFC 9110 §7.8: a 426's Upgrade is listed among the connection options.
			if tc.status == 426 && !strings.Contains(strings.Join(resp.Header.Values("Connection"), ","), "Upgrade") {
				t.Errorf("426 with Connection %q, want Upgrade among its options", resp.Header.Values("Connection"))
			}
		})
	}
}

func TestOrigins(t *testing.T) {
	o := &Options{Origins: []string{"*.trusted.example", "localhost:*"}}
	cases := []struct {
		origin string
		ok     bool
	}{
		{"", true}, // not a browser
		{"http://example.com", true},
		{"https://EXAMPLE.com", true}, // the request's own host, in any case
		{"https://app.trusted.example", true},
		{"http://localhost:3000", true},
		{"https://trusted.example.evil", false},
		{"https://evil.example", false},
		{"null", false},
	}
	addr := serve(t, echo(o))
	for _, tc := range cases {
		t.Run(tc.origin, func(t *testing.T) {
			c := coretest.Dial(t, addr)
			extra := ""
			if tc.origin != "" {
				extra = "Origin: " + tc.origin + "\r\n"
			}
			c.Send(strings.Replace(upgradeRequest("/"), "\r\n\r\n", "\r\n"+extra+"\r\n", 1))
			resp, _ := c.Response("GET")
			if got := resp.StatusCode == 101; got != tc.ok {
				t.Fatalf("answered %d, allowed %v", resp.StatusCode, tc.ok)
			}
		})
	}
	t.Run("star", func(t *testing.T) {
		c := &client{Conn: coretest.Dial(t, serve(t, echo(&Options{Origins: []string{"*"}})))}
		c.Send(strings.Replace(upgradeRequest("/"), "\r\n\r\n", "\r\nOrigin: https://anywhere.example\r\n\r\n", 1))
		if resp, _ := c.Response("GET"); resp.StatusCode != 101 {
			t.Fatalf("answered %d", resp.StatusCode)
		}
	})
}

func TestSubprotocol(t *testing.T) {
	o := &Options{Subprotocols: []string{"v2.chat", "v1.chat"}}
	var chosen = make(chan string, 1)
	addr := serve(t, func(cx *core.Ctx) {
		c, err := Accept(cx, o)
		if err != nil {
			return
		}
		chosen <- c.Subprotocol()
		c.Close(CloseNormal, "")
	})
	cases := []struct{ offer, want string }{
		{"Sec-WebSocket-Protocol: v1.chat, v2.chat", "v2.chat"}, // the server's preference
		{"Sec-WebSocket-Protocol: v1.chat", "v1.chat"},
		{"Sec-WebSocket-Protocol: V2.CHAT", ""}, // names are case-sensitive (§4.1)
		{"X-None: 1", ""},
	}
	for _, tc := range cases {
		t.Run(tc.offer, func(t *testing.T) {
			c, resp := dial(t, addr, tc.offer)
			if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != tc.want {
				t.Errorf("answered Sec-WebSocket-Protocol %q, want %q", got, tc.want)
			}
			if got := coretest.Receive(t, "the subprotocol", chosen); got != tc.want {
				t.Errorf("Subprotocol() = %q, want %q", got, tc.want)
			}
			c.answerClose(CloseNormal)
		})
	}
}

// TestUpgradeAnswer checks the 101 itself (RFC 6455 §4.2.2, RFC 9110 §15.2.2).
func TestUpgradeAnswer(t *testing.T) {
	c, resp := dial(t, serve(t, echo(nil)))
	for name, want := range map[string]string{"Upgrade": "websocket", "Connection": "Upgrade"} {
		if got := resp.Header.Get(name); !strings.EqualFold(got, want) {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	for _, name := range []string{"Content-Length", "Transfer-Encoding", "Sec-WebSocket-Extensions"} {
		if v := resp.Header.Get(name); v != "" {
			t.Errorf("the 101 has %s: %q", name, v)
		}
	}
	c.send(frame.Text, "after the 101")
	c.expect(frame.Text, "after the 101")
}
