package interop

import (
	"encoding/binary"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/coretest"
)

// closeCases are Autobahn's cases 7: the close handshake. A close frame is answered with one
// (echoing its code, or 1000, or nothing for none) and the TCP connection is closed; what
// comes after a close frame is not answered; a close frame that breaks a rule fails the
// connection (1002, or 1007 for a reason that is not UTF-8).
func closeCases() []confCase {
	big := repeat("BAsd7&jh23", 256<<10)
	cases := []confCase{
		{id: "7.1.1", what: "a message, then a close: echo, then the close answered", run: func(c *rawClient) {
			c.send(text("Hello World!"))
			c.expectMessage(opText, []byte("Hello World!"))
			c.closeNormally()
		}},
		{id: "7.1.2", what: "a close, then another: the second is not answered", run: func(c *rawClient) {
			c.send(closeFrame(1000, ""), closeFrame(1000, ""))
			c.expectClose(1000)
		}},
		{id: "7.1.3", what: "a close, then a ping: no pong", run: func(c *rawClient) {
			c.send(closeFrame(1000, ""), ping("Hello World!"))
			c.expectClose(1000)
		}},
		{id: "7.1.4", what: "a close, then a message: no echo", run: func(c *rawClient) {
			c.send(closeFrame(1000, ""), text("Hello World!"))
			c.expectClose(1000)
		}},
		{id: "7.1.5", what: "a first fragment, a close, the last fragment: no echo", run: func(c *rawClient) {
			c.send(frag(opText, "fragment1", false), closeFrame(1000, ""), frag(opCont, "fragment2", true))
			c.expectClose(1000)
		}},
		{id: "7.1.6", what: "a 256 KiB message, a close, a ping: the echo may come before the close, no pong", run: func(c *rawClient) {
			c.send(wsFrame{fin: true, op: opText, payload: big}, closeFrame(1000, ""), ping("Hello World!"))
			if ev := c.next(); ev.op != opClose {
				if ev.op != opText || string(ev.data) != string(big) {
					c.fatalf("got opcode %#x %.60q (%d bytes), want the echo or the close", ev.op, ev.data, len(ev.data))
				}
				c.expectClose(1000)
			} else if ev.code != 1000 {
				c.fatalf("close frame with %d, want 1000", ev.code)
			} else {
				c.expectEOF()
			}
		}},
		{id: "7.3.1", what: "a close without payload: answered with none, or 1000", run: func(c *rawClient) {
			c.send(closeFrame(0, ""))
			c.expectClose(0, 1000)
		}},
		{id: "7.3.2", what: "a close with a 1-byte payload (§5.5.1)", run: func(c *rawClient) {
			c.failsWith(1002, wsFrame{fin: true, op: opClose, payload: []byte{0x03}})
		}},
		{id: "7.3.3", what: "a close with 1000", run: func(c *rawClient) { c.closeNormally() }},
		{id: "7.3.4", what: "a close with 1000 and a reason", run: func(c *rawClient) {
			c.send(closeFrame(1000, "Hello World!"))
			c.expectClose(1000)
		}},
		{id: "7.3.5", what: "a close with 1000 and a reason of 123 bytes: 125 in all", run: func(c *rawClient) {
			c.send(closeFrame(1000, strings.Repeat("*", 123)))
			c.expectClose(1000)
		}},
		{id: "7.3.6", what: "a close with 1000 and a reason of 124 bytes: over 125 (§5.5)", run: func(c *rawClient) {
			c.failsWith(1002, closeFrame(1000, strings.Repeat("*", 124)))
		}},
		{id: "7.5.1", what: "a close whose reason is not UTF-8", run: func(c *rawClient) {
			c.failsWith(1007, closeFrame(1000, kosme+"\xed\xa0\x80edited"))
		}},
	}
	// 7.7: the codes a peer may send (§7.4.1, §7.4.2), answered; the suite's own 7.7.iana
	// adds those IANA's registry added since (§11.7): 1012, 1013, 1014.
	for i, code := range []uint16{1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999} {
		cases = append(cases, closeWith("7.7."+strconv.Itoa(i+1), code))
	}
	for _, code := range []uint16{1012, 1013, 1014} {
		cases = append(cases, closeWith("7.7.iana/"+strconv.Itoa(int(code)), code))
	}
	// 7.9: codes no endpoint may send, a protocol error. 7.13: codes past the ranges §7.4.2
	// defines, which no endpoint may send either; Autobahn leaves the answer open (a normal
	// close, or a protocol error: the code itself cannot be echoed).
	for i, code := range []uint16{0, 999, 1004, 1005, 1006, 1016, 1100, 2000, 2999} {
		cases = append(cases, closeRefused("7.9."+strconv.Itoa(i+1), code, 1002))
	}
	for i, code := range []uint16{5000, 65535} {
		cases = append(cases, closeRefused("7.13."+strconv.Itoa(i+1), code, 1002, 1000))
	}
	return cases
}

// closeWith is a case that closes with a valid code and expects it echoed, or 1000.
func closeWith(id string, code uint16) confCase {
	return confCase{id: id, what: fmt.Sprintf("a close with %d", code), run: func(c *rawClient) {
		c.send(closeFrame(code, ""))
		c.expectClose(code, 1000)
	}}
}

// closeRefused is a case that closes with a code no endpoint may send, and expects one of
// answers.
func closeRefused(id string, code uint16, answers ...uint16) confCase {
	return confCase{id: id, what: fmt.Sprintf("a close with %d, which no endpoint may send", code), run: func(c *rawClient) {
		c.send(wsFrame{fin: true, op: opClose, payload: binary.BigEndian.AppendUint16(nil, code)})
		c.expectClose(answers...)
	}}
}

// bigPayload returns n bytes of a message of type op that compress well, as Autobahn's case 9
// payloads do, with each KiB numbered so that a piece cut, repeated or moved shows.
func bigPayload(op byte, n int) []byte {
	b := make([]byte, 0, n+1024)
	for i := 0; len(b) < n; i++ {
		if op == opText {
			b = fmt.Appendf(b, "%08x", i)
			b = append(b, repeat("BAsd7&jh23", 1016)...)
		} else {
			b = binary.BigEndian.AppendUint32(b, uint32(i))
			b = append(b, repeat("\xfe", 1020)...)
		}
	}
	return b[:n]
}

// limitsCases are Autobahn's cases 9 and 10: big messages, whole, fragmented and written in
// chops, and many small ones, each echoed whole; and 10.1.1, a message fragmented as an
// auto-fragmenting client would.
func limitsCases() []confCase {
	var cases []confCase
	ops := []byte{opText, opBinary}
	for g, op := range ops {
		for i, n := range []int{64 << 10, 256 << 10, 1 << 20, 4 << 20, 8 << 20, 16 << 20} {
			cases = append(cases, confCase{id: fmt.Sprintf("9.%d.%d", g+1, i+1), what: fmt.Sprintf("a message of %d bytes", n),
				run: func(c *rawClient) {
					msg := bigPayload(op, n)
					c.send(wsFrame{fin: true, op: op, payload: msg})
					c.expectMessage(op, msg)
					c.closeNormally()
				}})
		}
	}
	for g, op := range ops {
		for i, f := range []int{64, 256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20} {
			cases = append(cases, confCase{id: fmt.Sprintf("9.%d.%d", g+3, i+1), what: fmt.Sprintf("a message of 4 MiB in fragments of %d bytes", f),
				run: func(c *rawClient) {
					msg := bigPayload(op, 4<<20)
					c.send(fragmentsOf(op, msg, f)...)
					c.expectMessage(op, msg)
					c.closeNormally()
				}})
		}
	}
	for g, op := range ops {
		for i, chop := range []int{64, 128, 256, 512, 1024, 2048} {
			cases = append(cases, confCase{id: fmt.Sprintf("9.%d.%d", g+5, i+1), what: fmt.Sprintf("a message of 1 MiB written %d bytes at a time", chop),
				run: func(c *rawClient) {
					msg := bigPayload(op, 1<<20)
					c.sendChops(chop, wsFrame{fin: true, op: op, payload: msg})
					c.expectMessage(op, msg)
					c.closeNormally()
				}})
		}
	}
	for g, op := range ops {
		for i, n := range []int{0, 16, 64, 256, 1024, 4096} {
			cases = append(cases, confCase{id: fmt.Sprintf("9.%d.%d", g+7, i+1), what: fmt.Sprintf("1000 messages of %d bytes, one round trip each", n),
				run: func(c *rawClient) {
					for k := range 1000 {
						msg := bigPayload(op, n)
						if n >= 8 {
							copy(msg, fmt.Sprintf("%08d", k))
						}
						c.send(wsFrame{fin: true, op: op, payload: msg})
						c.expectMessage(op, msg)
					}
					c.closeNormally()
				}})
		}
	}
	// The suite's own: messages written by another goroutine while this one reads their echoes,
	// so that the server's output waits for the client as its input does: nothing is dropped,
	// nothing reordered.
	for i, m := range []struct{ n, size int }{{64, 256 << 10}, {2000, 100}} {
		cases = append(cases, confCase{id: fmt.Sprintf("9.pipelined/%d", i+1), what: fmt.Sprintf("%d messages of %d bytes written while the echoes are read", m.n, m.size),
			run: func(c *rawClient) {
				msgs := make([][]byte, m.n)
				frames := make([]wsFrame, m.n)
				for k := range msgs {
					msgs[k] = bigPayload(opBinary, m.size)
					copy(msgs[k], fmt.Sprintf("%08d", k))
					frames[k] = bin(msgs[k])
				}
				wire := c.encode(frames...)
				wrote := make(chan error, 1)
				go func() { // no t.Fatal here: the error goes to the test's goroutine
					for _, b := range wire {
						c.conn.SetWriteDeadline(time.Now().Add(coretest.Patience))
						if _, err := c.conn.Write(b); err != nil {
							wrote <- err
							return
						}
					}
					wrote <- nil
				}()
				for k := range msgs {
					c.expectMessage(opBinary, msgs[k])
				}
				if err := coretest.Receive(c.t, "the writer's end", wrote); err != nil {
					c.fatalf("writing: %v", err)
				}
				c.closeNormally()
			}})
	}
	return append(cases, confCase{id: "10.1.1", what: "a message of 64 KiB in fragments of 1300 bytes", run: func(c *rawClient) {
		msg := pattern(65536)
		c.send(fragmentsOf(opText, msg, 1300)...)
		c.expectMessage(opText, msg)
		c.closeNormally()
	}})
}

// fragmentsOf cuts msg into frames of size bytes, the first of type op.
func fragmentsOf(op byte, msg []byte, size int) []wsFrame {
	var frames []wsFrame
	for i := 0; i == 0 || i < len(msg); i += size {
		f := wsFrame{op: opCont, payload: msg[i:min(i+size, len(msg))], fin: i+size >= len(msg)}
		if i == 0 {
			f.op = op
		}
		frames = append(frames, f)
	}
	return frames
}

// maxMessageCases are the suite's own cases of the limit (-max-message), which Autobahn
// leaves out: a message at the limit is echoed, one past it fails the connection with 1009,
// whole or in fragments.
func maxMessageCases(limit int) []confCase {
	return []confCase{
		{id: "limit/1", what: "a binary message at the limit", run: func(c *rawClient) {
			c.send(bin(binPattern(limit)))
			c.expectMessage(opBinary, binPattern(limit))
			c.closeNormally()
		}},
		{id: "limit/2", what: "a binary message a byte over the limit", run: func(c *rawClient) {
			c.failsWith(1009, bin(binPattern(limit+1)))
		}},
		{id: "limit/3", what: "a text message a byte over the limit", run: func(c *rawClient) {
			c.failsWith(1009, wsFrame{fin: true, op: opText, payload: pattern(limit + 1)})
		}},
		{id: "limit/4", what: "a message at the limit in 3 fragments", run: func(c *rawClient) {
			msg := binPattern(limit)
			c.send(fragmentsOf(opBinary, msg, limit/3+1)...)
			c.expectMessage(opBinary, msg)
			c.closeNormally()
		}},
		{id: "limit/5", what: "a message over the limit in 2 fragments, each under it", run: func(c *rawClient) {
			c.failsWith(1009, fragmentsOf(opBinary, binPattern(limit+1), limit/2+1)...)
		}},
		{id: "limit/6", what: "a message over the limit in 1000 fragments", run: func(c *rawClient) {
			c.failsWith(1009, fragmentsOf(opText, pattern(limit+1000), limit/1000+1)...)
		}},
		{id: "limit/7", what: "a frame header claiming 2^63-1 bytes, failed without waiting for them", run: func(c *rawClient) {
			c.write([]byte{0x82, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4})
			c.expectClose(1009)
		}},
		{id: "limit/8", what: "a frame length with its most significant bit set (§5.2)", run: func(c *rawClient) {
			c.write([]byte{0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4})
			c.expectClose(1002)
		}},
	}
}

// handshakeCases are the suite's own cases of the opening handshake (§4.2): what is refused,
// with which status, and what the server answers of what the client asks.
func handshakeCases(t *testing.T, plain, compress *wsServer) {
	t.Run("Upgrade and Connection as lists, in any case", func(t *testing.T) {
		plain.dial(t, "Upgrade: WebSocket", "Connection: keep-alive, UPGRADE").closeNormally()
	})
	refusals := []struct {
		name, method string
		extra        []string
		status       int
	}{
		{"version 8", "GET", []string{"Sec-WebSocket-Version: 8"}, 426},
		{"no version", "GET", []string{"Sec-WebSocket-Version:"}, 426},
		{"no key", "GET", []string{"Sec-WebSocket-Key:"}, 400},
		{"a key of 15 bytes", "GET", []string{"Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAA"}, 400},
		{"no Upgrade", "GET", []string{"Upgrade:"}, 426},
		{"no Connection: upgrade", "GET", []string{"Connection: keep-alive"}, 400},
		{"POST", "POST", []string{"Content-Length: 0"}, 405},
		{"another origin", "GET", []string{"Origin: http://elsewhere.example"}, 403},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			_, resp := handshakeRaw(t, plain.addr, tc.method, tc.extra...)
			if resp.StatusCode != tc.status {
				t.Fatalf("answered %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.status == 426 && resp.Header.Get("Sec-WebSocket-Version") != "13" {
				t.Errorf("426 with Sec-WebSocket-Version %q, want 13 (§4.4)", resp.Header.Get("Sec-WebSocket-Version"))
			}
		})
	}
	t.Run("same origin", func(t *testing.T) {
		plain.dial(t, "Origin: http://"+plain.addr).closeNormally()
	})
	t.Run("a subprotocol not spoken", func(t *testing.T) {
		c := plain.dial(t, "Sec-WebSocket-Protocol: chat, superchat")
		if p := c.resp.Header.Values("Sec-WebSocket-Protocol"); len(p) != 0 {
			t.Fatalf("Sec-WebSocket-Protocol %q answered, where the server speaks none (§4.2.2)", p)
		}
		c.closeNormally()
	})
	t.Run("permessage-deflate without -compress", func(t *testing.T) {
		plain.dial(t, "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits").closeNormally() // negotiated checks the answer is none
	})
	t.Run("extensions that do not parse", func(t *testing.T) {
		// RFC 6455 §9.1 gives the syntax and no answer to a list outside it: the server may
		// refuse the handshake, or accept it without the extension.
		c, resp := handshakeRaw(t, compress.addr, "GET", "Sec-WebSocket-Extensions: permessage-deflate; =15")
		if resp.StatusCode == http.StatusSwitchingProtocols {
			if ext := resp.Header.Values("Sec-WebSocket-Extensions"); len(ext) != 0 {
				t.Fatalf("Sec-WebSocket-Extensions %q answering a list that does not parse", ext)
			}
			c.closeNormally()
		} else if resp.StatusCode != 400 {
			t.Fatalf("answered %d, want 101 without the extension or 400", resp.StatusCode)
		}
	})
}
