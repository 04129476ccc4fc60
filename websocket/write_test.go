package websocket

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// TestSendPolicy: Send in one turn of the loop (the output is not written before the turn
// ends: here, one call of Events.Message) fills the queue to MaxQueued, says so on the way,
// and then applies the policy.
func TestSendPolicy(t *testing.T) {
	msg := make([]byte, 64<<10)
	for name, policy := range map[string]SlowClientPolicy{"close": CloseSlowClient, "drop": DropMessages} {
		t.Run(name, func(t *testing.T) {
			o := &Options{MaxQueued: 1 << 20, SlowClient: policy}
			results := make(chan []SendResult, 1)
			addr := serve(t, func(cx *core.Ctx) {
				Serve(cx, o, &Events{Message: func(c *Conn, _ MessageType, data []byte) {
					if string(data) != "go" {
						return
					}
					var rs []SendResult
					for range 20 {
						rs = append(rs, c.Send(Binary, msg))
					}
					results <- rs
				}})
			})
			c, _ := dial(t, addr)
			c.send(frame.Text, "go")
			rs := coretest.Receive(t, "the sends", results)
			var queued, back, dropped int
			for i, r := range rs {
				switch r {
				case SendQueued:
					queued++
				case SendBackpressure:
					back++
				case SendDropped:
					dropped++
				default:
					if policy == DropMessages || i == 0 || rs[i-1] != SendDropped && rs[i-1] != SendClosed {
						t.Fatalf("send %d: %v (all: %v)", i, r, rs)
					}
				}
			}
			sent := queued + back
			// 256 KiB of high water: 3 messages of 64 KiB and their headers are under it; 1 MiB of
			// queue: 15 fit.
			if queued != 3 || sent != 15 || dropped == 0 {
				t.Fatalf("%d queued, %d with backpressure, %d dropped: %v", queued, back, dropped, rs)
			}
			if policy == CloseSlowClient {
				c.ExpectEOF() // at once, what was queued dropped, and no close frame
				return
			}
			for range sent {
				if h, p := c.next(); h.Opcode != frame.Binary || len(p) != len(msg) {
					t.Fatalf("got %v of %d bytes", h.Opcode, len(p))
				}
			}
			c.send(frame.Text, "still open")
			c.send(frame.Close, closePayload(1000, ""))
			c.expectClose(1000)
		})
	}
}

// TestWriteParks: WriteMessage in the handler parks it past the high-water mark, so the
// output never grows beyond it by more than a message, however slow the client.
func TestWriteParks(t *testing.T) {
	msg := make([]byte, 64<<10)
	const n = 200
	most := make(chan int, 1)
	addr := serve(t, func(cx *core.Ctx) {
		c, err := Accept(cx, nil)
		if err != nil {
			return
		}
		high := 0
		for i := range n {
			binary.BigEndian.PutUint32(msg, uint32(i))
			if err := c.WriteMessage(Binary, msg); err != nil {
				t.Error(err)
				return
			}
			high = max(high, c.hc.Buffered())
		}
		most <- high
		c.ReadMessage() // until the client closes
	})
	c, _ := dial(t, addr)
	for i := range n {
		h, p := c.next()
		if h.Opcode != frame.Binary || len(p) != len(msg) || binary.BigEndian.Uint32(p) != uint32(i) {
			t.Fatalf("message %d: %v of %d bytes, number %d", i, h.Opcode, len(p), binary.BigEndian.Uint32(p))
		}
	}
	if high := coretest.Receive(t, "the handler's figure", most); high > 256<<10 {
		t.Errorf("the handler went on with %d bytes queued, past the high-water mark", high)
	}
}

// TestGoroutines: reads and writes from several goroutines at once are each whole, in each
// goroutine's order, and race nothing.
func TestGoroutines(t *testing.T) {
	const writers, each = 4, 50
	addr := serve(t, func(cx *core.Ctx) {
		c, err := Accept(cx, nil)
		if err != nil {
			return
		}
		r := c.Remote() // the goroutines' side of the connection
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					msg := bytes.Repeat([]byte{byte('a' + w)}, 1000+i)
					if err := r.WriteMessage(Text, msg); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		// Two goroutines read, each echoing what it reads; the handler returns (it must not wait
		// for goroutines: that would block its loop), and the connection lives on.
		for range 2 {
			wg.Go(func() {
				for {
					typ, m, err := r.ReadMessage()
					if err != nil {
						return
					}
					r.WriteMessage(typ, m)
				}
			})
		}
	})
	c, _ := dial(t, addr)
	next := make([]int, writers)
	for range writers * each {
		h, p := c.next()
		w := int(p[0] - 'a')
		if h.Opcode != frame.Text || w < 0 || w >= writers || len(p) != 1000+next[w] || !bytes.Equal(p, bytes.Repeat(p[:1], len(p))) {
			t.Fatalf("a message of %d bytes from writer %d, out of order or mixed", len(p), w)
		}
		next[w]++
	}
	for i := range 10 {
		c.send(frame.Binary, fmt.Sprint(i))
		if h, _ := c.next(); h.Opcode != frame.Binary {
			t.Fatalf("echo of %d: %v", i, h.Opcode)
		}
	}
	c.send(frame.Close, closePayload(1000, ""))
	c.expectClose(1000)
}

// TestReadAfterClose: the sequential reads end with why the connection closed.
func TestReadAfterClose(t *testing.T) {
	errs := make(chan error, 2)
	addr := serve(t, func(cx *core.Ctx) {
		c, err := Accept(cx, nil)
		if err != nil {
			return
		}
		_, _, err = c.ReadMessage()
		errs <- err
		errs <- c.WriteMessage(Text, []byte("too late"))
	})
	c, _ := dial(t, addr)
	c.send(frame.Close, closePayload(4321, "bye"))
	c.expectClose(4321)
	var ce *CloseError
	if err := coretest.Receive(t, "the read's error", errs); !errors.As(err, &ce) || ce.Code != 4321 || ce.Reason != "bye" || !ce.Remote {
		t.Fatalf("ReadMessage: %v", err)
	}
	if err := coretest.Receive(t, "the write's error", errs); err == nil {
		t.Fatal("WriteMessage after the close succeeded")
	}
}

// TestNextReaderWriter: the io.Reader and io.Writer of a message.
func TestNextReaderWriter(t *testing.T) {
	addr := serve(t, func(cx *core.Ctx) {
		c, err := Accept(cx, nil)
		if err != nil {
			return
		}
		for {
			typ, r, err := c.NextReader()
			if err != nil {
				return
			}
			w, _ := c.NextWriter(typ)
			io.Copy(w, r)
			io.WriteString(w, "!")
			if w.Close() != nil {
				return
			}
		}
	})
	c, _ := dial(t, addr)
	c.send(frame.Text, "one")
	c.expect(frame.Text, "one!")
	c.send(frame.Binary, string(make([]byte, 70_000)))
	c.expect(frame.Binary, string(make([]byte, 70_000))+"!")
}

// TestDrained: an event-style sender that holds back on SendBackpressure hears from Drained
// when the client has taken enough, and goes on: every message arrives, in order, and the
// output never went far past the high-water mark.
func TestDrained(t *testing.T) {
	msg := make([]byte, 64<<10)
	const n = 100
	next := 0
	most := 0
	sendSome := func(c *Conn) {
		for next < n {
			binary.BigEndian.PutUint32(msg, uint32(next))
			r := c.Send(Binary, msg)
			most = max(most, c.hc.Buffered())
			if r != SendQueued && r != SendBackpressure {
				t.Errorf("message %d: %v", next, r)
				return
			}
			next++
			if r == SendBackpressure {
				return // Drained goes on
			}
		}
	}
	drained := 0
	report := make(chan [2]int, 1)
	ev := &Events{
		Message: func(c *Conn, _ MessageType, data []byte) {
			if string(data) == "report" {
				report <- [2]int{drained, most} // the counters are the loop's
				return
			}
			sendSome(c)
		},
		Drained: func(c *Conn) {
			drained++
			sendSome(c)
		},
	}
	addr := serve(t, func(cx *core.Ctx) { Serve(cx, nil, ev) })
	c, _ := dial(t, addr)
	c.send(frame.Text, "go")
	for i := range n {
		h, p := c.next()
		if h.Opcode != frame.Binary || len(p) != len(msg) || binary.BigEndian.Uint32(p) != uint32(i) {
			t.Fatalf("message %d: %v of %d bytes, number %d", i, h.Opcode, len(p), binary.BigEndian.Uint32(p))
		}
	}
	c.send(frame.Text, "report")
	r := coretest.Receive(t, "the counters", report)
	if drained, most := r[0], r[1]; drained == 0 || most > 256<<10+len(msg)+frame.MaxHeaderSize {
		t.Errorf("Drained called %d times; at most %d bytes queued", drained, most)
	}
}

// TestWriteMessageOverMaxQueued: MaxQueued bounds what Send leaves for a slow client, not
// WriteMessage, which waits for its output to drain: a handler echoing a message larger than
// MaxQueued sends it whole.
func TestWriteMessageOverMaxQueued(t *testing.T) {
	o := &Options{MaxQueued: 64 << 10, MaxMessage: 1 << 20}
	c, _ := dial(t, serve(t, echo(o)))
	msg := strings.Repeat("0123456789abcdef", 512<<10/16)
	c.send(frame.Text, msg)
	h, p := c.next()
	if h.Opcode != frame.Text || string(p) != msg {
		t.Fatalf("echoed %v of %d bytes, want the text message of %d", h.Opcode, len(p), len(msg))
	}
}
