package websocket

import (
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// styles are the two ways of writing a handler; every rule holds for both.
var styles = []struct {
	name string
	h    func(*Options) core.Handler
}{
	{"sequential", echo},
	{"event", echoServe},
}

func TestEcho(t *testing.T) {
	for _, st := range styles {
		t.Run(st.name, func(t *testing.T) {
			c, _ := dial(t, serve(t, st.h(nil)))
			c.send(frame.Text, "hello")
			c.expect(frame.Text, "hello")
			c.send(frame.Binary, "\x00\x01\x02")
			c.expect(frame.Binary, "\x00\x01\x02")
			c.send(frame.Text, "")
			c.expect(frame.Text, "")
			big := strings.Repeat("x", 100_000)
			c.send(frame.Binary, big)
			c.expect(frame.Binary, big)
			// Fragmented, with a ping between the fragments (§5.4): the pong comes first, then the
			// message whole.
			c.write(c.frameBytes(frame.Text, []byte("frag"), false, false, false))
			c.send(frame.Ping, "p")
			c.write(c.frameBytes(frame.Continuation, []byte("men"), false, false, false))
			c.write(c.frameBytes(frame.Continuation, []byte("ted"), true, false, false))
			c.expect(frame.Pong, "p")
			c.expect(frame.Text, "fragmented")
			c.send(frame.Close, closePayload(1000, "bye"))
			c.expectClose(1000)
		})
	}
}

// TestByteAtATime sends frames one byte per write: every header and payload cut is handled.
func TestByteAtATime(t *testing.T) {
	for _, st := range styles {
		t.Run(st.name, func(t *testing.T) {
			c, _ := dial(t, serve(t, st.h(nil)))
			b := c.frameBytes(frame.Text, []byte("héllo wörld"), true, false, false)
			b = append(b, c.frameBytes(frame.Binary, make([]byte, 300), true, false, false)...)
			c.SetNoDelay(true)
			for i := range b {
				c.write(b[i : i+1])
			}
			c.expect(frame.Text, "héllo wörld")
			c.expect(frame.Binary, string(make([]byte, 300)))
		})
	}
}

// TestProtocolErrors: each frame breaks a rule of RFC 6455 and closes the connection with the
// code the RFC gives.
func TestProtocolErrors(t *testing.T) {
	type frameSpec struct {
		op       frame.Opcode
		payload  string
		fin      bool
		rsv1     bool
		unmasked bool
	}
	cases := []struct {
		name   string
		frames []frameSpec
		code   uint16
	}{
		{"unmasked", []frameSpec{{op: frame.Text, payload: "x", fin: true, unmasked: true}}, 1002},              // §5.1
		{"rsv1 without an extension", []frameSpec{{op: frame.Text, payload: "x", fin: true, rsv1: true}}, 1002}, // §5.2
		{"reserved opcode", []frameSpec{{op: 3, fin: true}}, 1002},                                              // §5.2
		{"reserved control opcode", []frameSpec{{op: 0xb, fin: true}}, 1002},
		{"fragmented ping", []frameSpec{{op: frame.Ping, payload: "x"}}, 1002},                                                   // §5.5
		{"long ping", []frameSpec{{op: frame.Ping, payload: strings.Repeat("x", 126), fin: true}}, 1002},                         // §5.5
		{"continuation first", []frameSpec{{op: frame.Continuation, payload: "x", fin: true}}, 1002},                             // §5.4
		{"new message inside one", []frameSpec{{op: frame.Text, payload: "a"}, {op: frame.Text, payload: "b", fin: true}}, 1002}, // §5.4
		{"invalid utf-8", []frameSpec{{op: frame.Text, payload: "\xff", fin: true}}, 1007},                                       // §8.1
		{"utf-8 cut at the end", []frameSpec{{op: frame.Text, payload: "\xc3", fin: true}}, 1007},
		{"surrogate in a fragment", []frameSpec{{op: frame.Text, payload: "ok"}, {op: frame.Continuation, payload: "\xed\xa0\x80"}}, 1007},
		{"close with one byte", []frameSpec{{op: frame.Close, payload: "\x03", fin: true}}, 1002},                        // §5.5.1
		{"close with a reserved code", []frameSpec{{op: frame.Close, payload: closePayload(1005, ""), fin: true}}, 1002}, // §7.4.1
		{"close with code 999", []frameSpec{{op: frame.Close, payload: closePayload(999, ""), fin: true}}, 1002},
		{"close reason not utf-8", []frameSpec{{op: frame.Close, payload: closePayload(1000, "\xff"), fin: true}}, 1007},
	}
	for _, st := range styles {
		for _, tc := range cases {
			t.Run(st.name+"/"+tc.name, func(t *testing.T) {
				c, _ := dial(t, serve(t, st.h(nil)))
				for _, f := range tc.frames {
					c.write(c.frameBytes(f.op, []byte(f.payload), f.fin, f.rsv1, f.unmasked))
				}
				c.expectClose(tc.code)
			})
		}
	}
}

func TestMessageTooBig(t *testing.T) {
	o := &Options{MaxMessage: 1000}
	for _, st := range styles {
		t.Run(st.name, func(t *testing.T) {
			c, _ := dial(t, serve(t, st.h(o)))
			c.send(frame.Binary, strings.Repeat("x", 1000))
			c.expect(frame.Binary, strings.Repeat("x", 1000))
			c.write(c.frameBytes(frame.Binary, make([]byte, 600), false, false, false))
			c.write(c.frameBytes(frame.Continuation, make([]byte, 600), true, false, false))
			c.expectClose(1009)
		})
	}
}

func TestCloseEchoesCode(t *testing.T) {
	for _, st := range styles {
		t.Run(st.name, func(t *testing.T) {
			c, _ := dial(t, serve(t, st.h(nil)))
			c.send(frame.Close, closePayload(4001, "done"))
			c.expectClose(4001)
		})
		t.Run(st.name+"/empty", func(t *testing.T) {
			c, _ := dial(t, serve(t, st.h(nil)))
			c.send(frame.Close, "")
			h, p := c.next()
			if h.Opcode != frame.Close || len(p) != 0 {
				t.Fatalf("got %v %q, want an empty close frame", h.Opcode, p)
			}
			c.ExpectEOF()
		})
	}
}
