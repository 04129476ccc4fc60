package interop

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/websocket"
)

// The conformance suite: the cases of the Autobahn|Testsuite fuzzing client, numbered as there
// (1 framing, 2 pings and pongs, 3 reserved bits, 4 opcodes, 5 fragmentation, 6 UTF-8, 7 close
// handling, 9 limits and performance, 10 auto-fragmentation, 12 and 13 permessage-deflate),
// with a few of the suite's own beside them (the limit, the handshake, compression's failures).
// They run against the echo of examples/websocket, built and started as its users run it, with
// and without -compress; the compression cases also against an in-process server of package
// websocket with context takeover, which the example does not turn on. Each case asserts what
// RFC 6455 and RFC 7692 make of it exactly: the echo, the pongs, the close code the server
// sends (1002 for a protocol error, 1007 for invalid data, 1009 for a message too big) and the
// end of the TCP connection after it; and every frame the server sends is checked against what
// the RFCs allow a server to send.
//
// Autobahn's delays between chops are writes of their own here, with Nagle's algorithm off:
// the suite waits for what it expects, never for a time.

// A wsServer is a server the suite runs against.
type wsServer struct {
	addr     string
	compress bool // it accepts permessage-deflate
	takeover bool // with context takeover, when the client asks for it
}

// A confCase is one case: what it sends and expects, run on a fresh connection.
type confCase struct {
	id    string // Autobahn's case number, or the suite's own name
	what  string // what the case does
	plain bool   // RSV1 alone is what it sets, which permessage-deflate would make valid: run without only
	run   func(c *rawClient)
}

// runCases runs each case on a connection of its own to s, upgraded with the extra header
// lines.
func runCases(t *testing.T, s *wsServer, extra []string, cases []confCase) {
	for _, tc := range cases {
		if tc.plain && len(extra) > 0 {
			continue
		}
		t.Run(tc.id, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("case %s: %s", tc.id, tc.what)
				}
			})
			tc.run(s.dial(t, extra...))
		})
	}
}

// TestConformance runs the suite: its groups in parallel, each group's cases one at a time.
func TestConformance(t *testing.T) {
	bin := buildExample(t)
	plain := &wsServer{addr: startExample(t, bin)}
	compress := &wsServer{addr: startExample(t, bin, "-compress"), compress: true}
	limited := &wsServer{addr: startExample(t, bin, "-compress", "-max-message", "65536"), compress: true}
	takeover := &wsServer{addr: serveTakeover(t), compress: true, takeover: true}

	// Cases 1 to 10 without compression, as Autobahn runs them, and again on a connection that
	// agreed permessage-deflate as browsers offer it: the client's frames are uncompressed
	// (RSV1 clear, which RFC 7692 §6 allows), the server's echoes compressed.
	browserOffer := "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits"
	for _, m := range []struct {
		name  string
		s     *wsServer
		extra []string
	}{
		{"1-10/plain", plain, nil},
		{"1-10/compress", compress, []string{browserOffer}},
	} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			for _, cases := range [][]confCase{framingCases(), utf8Cases(), closeCases(), limitsCases()} {
				runCases(t, m.s, m.extra, cases)
			}
		})
	}
	t.Run("limit", func(t *testing.T) { runCases(t, limited, nil, maxMessageCases(65536)) })
	t.Run("handshake", func(t *testing.T) { handshakeCases(t, plain, compress) })
	for _, m := range []struct {
		name string
		s    *wsServer
	}{{"12-13/compress", compress}, {"12-13/takeover", takeover}} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			for _, g := range compressionCases() {
				runCases(t, m.s, []string{"Sec-WebSocket-Extensions: " + g.offer}, g.cases)
			}
			runCases(t, m.s, []string{browserOffer}, deflateFailureCases())
		})
	}
	t.Run("limit/compressed", func(t *testing.T) {
		runCases(t, limited, []string{browserOffer}, compressedLimitCases(65536))
	})
}

// buildExample builds examples/websocket into the test's directory, as its users build it, and
// returns the binary's path. It is built without the race detector even when the tests have
// it, which would make the suite's gigabyte of compressed traffic take most of an hour on two
// cores: the race detector watches package websocket in the test's own process (the takeover
// server here, the native tests beside).
func buildExample(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "websocket")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/dwellhttp/dwell/examples/websocket").CombinedOutput()
	if err != nil {
		t.Fatalf("building examples/websocket: %v\n%s", err, out)
	}
	return bin
}

// startExample runs the example with -addr 127.0.0.1:0 and args until the test ends, and
// returns the address of its first line, which must be exactly "listening http://ADDR". At
// the end it is sent SIGTERM, and must exit cleanly; its standard error is shown when the test
// fails.
func startExample(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.SysProcAttr = childAttr()
	var stderr coretest.LogBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	line, lineErr := bufio.NewReader(out).ReadString('\n')
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("%s %q after SIGTERM: %v", bin, args, err)
			}
		case <-time.After(coretest.Patience):
			cmd.Process.Kill()
			<-exited
			t.Errorf("%s %q still running %v after SIGTERM", bin, args, coretest.Patience)
		}
		if out := stderr.String(); t.Failed() && out != "" {
			t.Logf("%s %q's standard error:\n%s", bin, args, out)
		}
	})
	addr, ok := strings.CutPrefix(line, "listening http://")
	addr, nl := strings.CutSuffix(addr, "\n")
	if lineErr != nil || !ok || !nl || addr == "" || strings.ContainsAny(addr, " \t\r") {
		t.Fatalf("%s %q: first line %q (%v), want \"listening http://ADDR\"", bin, args, line, lineErr)
	}
	return addr
}

// serveTakeover serves, in the test's process, the example's echo loop on package websocket
// with context takeover allowed, and returns its address.
func serveTakeover(t *testing.T) string {
	o := &websocket.Options{Compress: true, ContextTakeover: true, MaxMessage: 16 << 20, MaxQueued: 33 << 20}
	_, addr := coretest.Serve(t, func(cx *core.Ctx) {
		c, err := websocket.Accept(cx, o)
		if err != nil {
			return
		}
		for {
			typ, msg, err := c.ReadMessage()
			if err != nil || c.WriteMessage(typ, msg) != nil {
				return
			}
		}
	}, core.Options{})
	return addr
}

// Payloads.

// pattern returns n bytes of printable ASCII whose position shows: a piece cut, repeated or
// moved changes what follows it.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(' ' + (i*7+i/95)%95)
	}
	return b
}

// binPattern is pattern's binary counterpart, with every byte value.
func binPattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131 + i>>8 + i>>16)
	}
	return b
}

// repeat returns s repeated to n bytes.
func repeat(s string, n int) []byte {
	return []byte(strings.Repeat(s, n/len(s)+1)[:n])
}

// framingCases are Autobahn's cases 1 to 5.
func framingCases() []confCase {
	var cases []confCase
	// 1.1, 1.2: messages of the lengths around each length encoding (§5.2: 7 bits, 16, 64),
	// echoed; the last one written 997 bytes at a time.
	for i, n := range []int{0, 125, 126, 127, 128, 65535, 65536, 65536} {
		chop := 0
		if i == 7 {
			chop = 997
		}
		for g, op := range []byte{opText, opBinary} {
			payload := pattern(n)
			if op == opBinary {
				payload = binPattern(n)
			}
			cases = append(cases, confCase{
				id: "1." + strconv.Itoa(g+1) + "." + strconv.Itoa(i+1), what: "a message of " + strconv.Itoa(n) + " bytes, echoed",
				run: func(c *rawClient) {
					if chop > 0 {
						c.sendChops(chop, wsFrame{fin: true, op: op, payload: payload})
					} else {
						c.send(wsFrame{fin: true, op: op, payload: payload})
					}
					c.expectMessage(op, payload)
					c.closeNormally()
				},
			})
		}
	}

	// 2: pings are answered with their payload, at once and each (§5.5.2, §5.5.3); a pong
	// unasked is ignored; a ping over 125 bytes fails the connection.
	pingCase := func(id, what string, payload []byte, chop int) confCase {
		return confCase{id: id, what: what, run: func(c *rawClient) {
			if chop > 0 {
				c.sendChops(chop, wsFrame{fin: true, op: opPing, payload: payload})
			} else {
				c.send(wsFrame{fin: true, op: opPing, payload: payload})
			}
			c.expectPong(string(payload))
			c.closeNormally()
		}}
	}
	tenPings := func(chop int) func(c *rawClient) {
		return func(c *rawClient) {
			var pings []wsFrame
			for i := range 10 {
				pings = append(pings, ping("payload-"+strconv.Itoa(i)))
			}
			if chop > 0 {
				c.sendChops(chop, pings...)
			} else {
				c.send(pings...)
			}
			for i := range 10 {
				c.expectPong("payload-" + strconv.Itoa(i))
			}
			c.closeNormally()
		}
	}
	cases = append(cases,
		pingCase("2.1", "a ping without payload", nil, 0),
		pingCase("2.2", "a ping with a text payload", []byte("Hello, world!"), 0),
		pingCase("2.3", "a ping with a binary payload", []byte{0x00, 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0x00, 0xff}, 0),
		pingCase("2.4", "a ping of 125 bytes", repeat("\xfe", 125), 0),
		confCase{id: "2.5", what: "a ping of 126 bytes fails the connection (§5.5)", run: func(c *rawClient) {
			c.failsWith(1002, wsFrame{fin: true, op: opPing, payload: repeat("\xfe", 126)})
		}},
		pingCase("2.6", "a ping of 125 bytes, an octet at a time", repeat("\xfe", 125), 1),
		confCase{id: "2.7", what: "an unsolicited pong without payload is ignored", run: func(c *rawClient) {
			c.send(pong(""))
			c.closeNormally()
		}},
		confCase{id: "2.8", what: "an unsolicited pong with payload is ignored", run: func(c *rawClient) {
			c.send(pong("unsolicited pong payload"))
			c.closeNormally()
		}},
		confCase{id: "2.9", what: "an unsolicited pong, then a ping: its pong alone comes", run: func(c *rawClient) {
			c.send(pong("unsolicited pong payload"), ping("ping payload"))
			c.expectPong("ping payload")
			c.closeNormally()
		}},
		confCase{id: "2.10", what: "10 pings, 10 pongs in order", run: tenPings(0)},
		confCase{id: "2.11", what: "10 pings an octet at a time, 10 pongs in order", run: tenPings(1)},
	)

	// 3: a reserved bit no extension defines fails the connection (§5.2), after the echo of
	// what came before, and nothing after it is answered. rsv is Autobahn's RSV value: 4 is
	// RSV1, 2 RSV2, 1 RSV3.
	type sendFn func(c *rawClient, frames ...wsFrame)
	oneChop := (*rawClient).send
	perFrame := (*rawClient).sendEach
	octets := func(c *rawClient, frames ...wsFrame) { c.sendChops(1, frames...) }
	afterHello := func(bad wsFrame, send sendFn) func(c *rawClient) {
		return func(c *rawClient) {
			send(c, text("Hello"), bad, ping(""))
			c.expectMessage(opText, []byte("Hello"))
			c.expectClose(1002)
		}
	}
	rsvFrame := func(rsv, op byte, payload string) wsFrame {
		return wsFrame{fin: true, rsv: rsv, op: op, payload: []byte(payload)}
	}
	cases = append(cases,
		confCase{id: "3.1", what: "a text message with RSV = 1", run: func(c *rawClient) {
			c.failsWith(1002, rsvFrame(1, opText, "Hello"))
		}},
		confCase{id: "3.2", what: "text, text with RSV = 2, ping", run: afterHello(rsvFrame(2, opText, "Hello"), oneChop)},
		confCase{id: "3.3", what: "text, text with RSV = 3, ping, a frame per write", run: afterHello(rsvFrame(3, opText, "Hello"), perFrame)},
		confCase{id: "3.4", what: "text, text with RSV = 4, ping, an octet per write", plain: true,
			run: afterHello(rsvFrame(4, opText, "Hello"), octets)},
		confCase{id: "3.5", what: "a binary message with RSV = 5", run: func(c *rawClient) {
			c.failsWith(1002, rsvFrame(5, opBinary, "\x00\xff\xfe\xfd\xfc\xfb\x00\xff"))
		}},
		confCase{id: "3.6", what: "a ping with RSV = 6", run: func(c *rawClient) {
			c.failsWith(1002, rsvFrame(6, opPing, "Hello"))
		}},
		confCase{id: "3.7", what: "a close with RSV = 7", run: func(c *rawClient) {
			c.failsWith(1002, wsFrame{fin: true, rsv: 7, op: opClose, payload: []byte{0x03, 0xe8}})
		}},
	)

	// 4: a reserved opcode, non-control (3-7) or control (11-15), fails the connection (§5.2).
	for g, ops := range [][]byte{{3, 4, 5, 6, 7}, {11, 12, 13, 14, 15}} {
		for i, op := range ops {
			id := "4." + strconv.Itoa(g+1) + "." + strconv.Itoa(i+1)
			bad := wsFrame{fin: true, op: op}
			if i == 1 || i >= 3 {
				bad.payload = []byte("reserved opcode payload")
			}
			tc := confCase{id: id, what: "a frame with the reserved opcode " + strconv.Itoa(int(op))}
			switch i {
			case 0, 1:
				tc.run = func(c *rawClient) { c.failsWith(1002, bad) }
			case 2:
				tc.run = afterHello(bad, oneChop)
			case 3:
				tc.run = afterHello(bad, perFrame)
			default:
				tc.run = afterHello(bad, octets)
			}
			cases = append(cases, tc)
		}
	}
	// The suite's own: a client's frame must be masked (§5.1).
	cases = append(cases, confCase{id: "masking/1", what: "an unmasked text frame", run: func(c *rawClient) {
		c.failsWith(1002, wsFrame{fin: true, op: opText, payload: []byte("Hello"), unmasked: true})
	}}, confCase{id: "masking/2", what: "a message, then an unmasked ping", run: func(c *rawClient) {
		c.send(text("Hello"), wsFrame{fin: true, op: opPing, unmasked: true})
		c.expectMessage(opText, []byte("Hello"))
		c.expectClose(1002)
	}})
	return append(cases, fragmentationCases()...)
}

// fragmentationCases are Autobahn's cases 5: fragments make one message, control frames may
// come between them and are answered at once, and anything else out of order fails the
// connection (§5.4, §5.5).
func fragmentationCases() []confCase {
	sends := []func(c *rawClient, frames ...wsFrame){
		(*rawClient).send,
		(*rawClient).sendEach,
		func(c *rawClient, frames ...wsFrame) { c.sendChops(1, frames...) },
	}
	fails := func(frames ...wsFrame) []func(c *rawClient) {
		var runs []func(c *rawClient)
		for _, send := range sends {
			runs = append(runs, func(c *rawClient) {
				send(c, frames...)
				c.expectClose(1002)
			})
		}
		return runs
	}
	var cases []confCase
	add := func(first int, what string, runs []func(c *rawClient)) {
		for i, run := range runs {
			cases = append(cases, confCase{id: "5." + strconv.Itoa(first+i), what: what, run: run})
		}
	}
	add(1, "a fragmented ping", fails(frag(opPing, "fragment1", false), frag(opCont, "fragment2", true))[:1])
	add(2, "a fragmented pong", fails(frag(opPong, "fragment1", false), frag(opCont, "fragment2", true))[:1])
	var echoes, withPing []func(c *rawClient)
	for _, send := range sends {
		echoes = append(echoes, func(c *rawClient) {
			send(c, frag(opText, "fragment1", false), frag(opCont, "fragment2", true))
			c.expectMessage(opText, []byte("fragment1fragment2"))
			c.closeNormally()
		})
		withPing = append(withPing, func(c *rawClient) {
			send(c, frag(opText, "fragment1", false), ping("pongme!"), frag(opCont, "fragment2", true))
			c.expectPong("pongme!")
			c.expectMessage(opText, []byte("fragment1fragment2"))
			c.closeNormally()
		})
	}
	add(3, "a text message in 2 fragments", echoes)
	add(6, "a text message in 2 fragments, a ping between them", withPing)
	add(9, "a final continuation with nothing to continue, then text",
		fails(frag(opCont, "non-continuation payload", true), text("Hello, world!")))
	add(12, "a continuation with nothing to continue, then text",
		fails(frag(opCont, "non-continuation payload", false), text("Hello, world!")))
	cases = append(cases,
		confCase{id: "5.15", what: "a message in 2 fragments, then a continuation with nothing to continue", run: func(c *rawClient) {
			c.send(frag(opText, "fragment1", false), frag(opCont, "fragment2", true),
				frag(opCont, "fragment3", false), frag(opText, "fragment4", true))
			c.expectMessage(opText, []byte("fragment1fragment2"))
			c.expectClose(1002)
		}},
		confCase{id: "5.16", what: "twice: a continuation first, then a message in 2 fragments", run: func(c *rawClient) {
			seq := []wsFrame{frag(opCont, "fragment1", false), frag(opText, "fragment2", false), frag(opCont, "fragment3", true)}
			c.failsWith(1002, append(seq, seq...)...)
		}},
		confCase{id: "5.17", what: "twice: a final continuation first, then a message in 2 fragments", run: func(c *rawClient) {
			seq := []wsFrame{frag(opCont, "fragment1", true), frag(opText, "fragment2", false), frag(opCont, "fragment3", true)}
			c.failsWith(1002, append(seq, seq...)...)
		}},
		confCase{id: "5.18", what: "a text message in 2 fragments, both with the text opcode", run: func(c *rawClient) {
			c.failsWith(1002, frag(opText, "fragment1", false), frag(opText, "fragment2", true))
		}},
	)
	for i, send := range sends[1:] {
		cases = append(cases, confCase{id: "5." + strconv.Itoa(19+i), what: "a message in 5 fragments, 2 pings between them", run: func(c *rawClient) {
			send(c, frag(opText, "fragment1", false), frag(opCont, "fragment2", false), ping("pongme 1!"),
				frag(opCont, "fragment3", false), frag(opCont, "fragment4", false), ping("pongme 2!"), frag(opCont, "fragment5", true))
			c.expectPong("pongme 1!")
			c.expectPong("pongme 2!")
			c.expectMessage(opText, []byte("fragment1fragment2fragment3fragment4fragment5"))
			c.closeNormally()
		}})
	}
	return cases
}
