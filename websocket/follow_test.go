package websocket

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/wait"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// A wait.Topic is a Source.
var _ Source[string] = (*wait.Topic[string])(nil)

// The tests' feeds encode a batch as "last|err|m1,m2,...", err "nil", "missed" or "timeout".

func encodeBatch(b []byte, msgs []string, last uint64, err error) []byte {
	b = strconv.AppendUint(b, last, 10)
	switch err {
	case nil:
		b = append(b, "|nil|"...)
	case wait.ErrMissed:
		b = append(b, "|missed|"...)
	case wait.ErrTimeout:
		b = append(b, "|timeout|"...)
	default:
		b = append(b, "|?|"...)
	}
	return append(b, strings.Join(msgs, ",")...)
}

// followServer serves GET /?after=N, following f from N with ev (nil: none of the
// application's).
func followServer(t *testing.T, f *Feed[string], o *Options, ev *Events, co core.Options) (*core.Server, string) {
	t.Helper()
	if ev == nil {
		ev = &Events{}
	}
	return coretest.Serve(t, func(cx *core.Ctx) {
		after, _ := strconv.ParseUint(cx.Query("after"), 10, 64)
		c, err := Serve(cx, o, ev)
		if err != nil {
			return
		}
		if err := f.Follow(cx, c, after); err != nil {
			t.Errorf("Follow: %v", err)
		}
	}, co)
}

// dialAfter opens a WebSocket on GET /?after=N.
func dialAfter(t *testing.T, addr string, after uint64) *client {
	t.Helper()
	c := &client{Conn: coretest.Dial(t, addr), key: [4]byte{1, 2, 3, 4}}
	c.upgrade(after)
	return c
}

// upgrade sends the opening handshake for GET /?after=N and reads the 101.
func (c *client) upgrade(after uint64) {
	c.T.Helper()
	c.Send(upgradeRequest("/?after=" + strconv.FormatUint(after, 10)))
	if resp, _ := c.Response("GET"); resp.StatusCode != 101 {
		c.T.Fatalf("upgrade answered %d", resp.StatusCode)
	}
}

// batch reads the next frame, a batch of encodeBatch's.
func (c *client) batch() string {
	c.T.Helper()
	h, p := c.next()
	if h.Opcode != frame.Text {
		c.T.Fatalf("got %v %.60q, want a batch", h.Opcode, p)
	}
	return string(p)
}

// TestFollow: a follower gets what came after its cursor at once, in one batch, then the sign
// that it has caught up, then each message as it is published; a cursor ahead of the topic is
// told the topic's own in the sign; the history's loss comes with ErrMissed.
func TestFollow(t *testing.T) {
	tp := wait.NewTopic[string](4)
	f := &Feed[string]{Topic: tp, Encode: encodeBatch, CaughtUp: true}
	_, addr := followServer(t, f, nil, nil, core.Options{})
	for _, m := range []string{"a", "b", "c"} {
		tp.Publish(m)
	}
	c := dialAfter(t, addr, 1)
	for _, want := range []string{"3|nil|b,c", "3|nil|"} {
		if got := c.batch(); got != want {
			t.Fatalf("catching up: %q, want %q", got, want)
		}
	}
	tp.Publish("d")
	if got := c.batch(); got != "4|nil|d" {
		t.Fatalf("live: %q", got)
	}
	go tp.Publish("e") // from another goroutine than the test's reads
	if got := c.batch(); got != "5|nil|e" {
		t.Fatalf("live: %q", got)
	}

	ahead := dialAfter(t, addr, 99)
	if got := ahead.batch(); got != "5|nil|" {
		t.Fatalf("from a cursor ahead: %q, want the topic's last", got)
	}
	for _, m := range []string{"f", "g", "h", "i"} {
		tp.Publish(m)
	}
	if got := follow(t, ahead, 5, 9); strings.Join(got, ",") != "f,g,h,i" {
		t.Fatalf("then %q", got)
	}
	old := dialAfter(t, addr, 2)
	for _, want := range []string{"9|missed|f,g,h,i", "9|nil|"} {
		if got := old.batch(); got != want {
			t.Fatalf("from a cursor older than the history: %q, want %q", got, want)
		}
	}
	coretest.WaitFor(t, "three followers", func() bool { return f.following.Load() == 3 })
	for _, cl := range []*client{c, ahead, old} {
		cl.send(frame.Close, closePayload(CloseNormal, ""))
		for h, _ := cl.next(); h.Opcode != frame.Close; h, _ = cl.next() {
		}
	}
	coretest.WaitFor(t, "the followers stopped", func() bool { return f.following.Load() == 0 })
}

// TestFollowersMissNothing: followers on four loops, each from its own cursor, while four
// goroutines publish: each gets every message after its cursor, once, in order — the topic's
// order, the same for all — whatever batches they came in.
func TestFollowersMissNothing(t *testing.T) {
	const publishers, each, followers = 4, 100, 40
	total := publishers * each
	tp := wait.NewTopic[string](total)
	f := &Feed[string]{Topic: tp, Encode: encodeBatch}
	_, addr := followServer(t, f, nil, nil, core.Options{Loops: 4})
	clients := make([]*client, followers)
	for i := range clients {
		clients[i] = dialAfter(t, addr, 0)
	}
	coretest.WaitFor(t, "every follower following", func() bool { return f.following.Load() == followers })
	done := make(chan struct{})
	for p := range publishers {
		go func() {
			for i := range each {
				tp.Publish(fmt.Sprintf("%d.%d", p, i))
			}
			done <- struct{}{}
		}()
	}
	for range publishers {
		coretest.Receive(t, "a publisher's end", done)
	}
	all, last, _ := tp.Since(0)
	if last != uint64(total) {
		t.Fatalf("the topic is at %d", last)
	}
	for i, c := range clients {
		var got []string
		for cursor := uint64(0); cursor < uint64(total); {
			b := strings.SplitN(c.batch(), "|", 3)
			n, _ := strconv.ParseUint(b[0], 10, 64)
			if b[1] != "nil" || n <= cursor {
				t.Fatalf("follower %d after %d: %q", i, cursor, b)
			}
			got = append(got, strings.Split(b[2], ",")...)
			cursor = n
		}
		if strings.Join(got, " ") != strings.Join(all, " ") {
			t.Fatalf("follower %d got %d messages, not the topic's %d in its order", i, len(got), len(all))
		}
	}
}

// inlineSource gives n batches of one message, each before OnNext returns, then waits for ever.
type inlineSource struct {
	n     int
	depth []int // the stack's depth in Encode, per batch
}

func (s *inlineSource) OnNext(c *core.Ctx, after uint64, timeout time.Duration, k func(*core.Ctx, []string, uint64, error)) {
	if after < uint64(s.n) {
		k(c, []string{strconv.FormatUint(after+1, 10)}, after+1, nil)
		return
	}
	c.Seam().WakeOnShutdown()
	c.Detach(timeout, func(c *core.Ctx, err error) { k(c, nil, after, err) })
}

// TestFollowInline: a Source whose OnNext always answers before it returns — a topic that
// keeps giving — is followed in a loop, not by recursion: the stack is as deep at the
// thousandth batch as at the first, and every batch is sent, in order.
func TestFollowInline(t *testing.T) {
	const n = 1000
	src := &inlineSource{n: n}
	f := &Feed[string]{Topic: src}
	depths := make(chan []int, 1)
	f.Encode = func(b []byte, msgs []string, last uint64, err error) []byte {
		if src.depth = append(src.depth, runtime.Callers(0, make([]uintptr, 512))); len(src.depth) == n {
			depths <- src.depth
		}
		return encodeBatch(b, msgs, last, err)
	}
	_, addr := followServer(t, f, nil, nil, core.Options{})
	c := dialAfter(t, addr, 0)
	for i := 1; i <= n; i++ {
		if got, want := c.batch(), fmt.Sprintf("%d|nil|%d", i, i); got != want {
			t.Fatalf("batch %d: %q, want %q", i, got, want)
		}
	}
	if d := coretest.Receive(t, "the depths", depths); d[n-1] != d[0] {
		t.Fatalf("the stack in Encode was %d frames deep at the first batch, %d at the last", d[0], d[n-1])
	}
}

// dialSmallWindow dials addr with a receive buffer of a few KiB, so that what the client does
// not read stays in the server's output rather than in the kernel's buffers.
func dialSmallWindow(t *testing.T, addr string) *client {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		return errors.Join(err, serr)
	}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(coretest.Patience))
	tc := nc.(*net.TCPConn)
	return &client{Conn: &coretest.Conn{T: t, TCPConn: tc, R: bufio.NewReader(tc)}, key: [4]byte{1, 2, 3, 4}}
}

// TestFollowSlowClient: a client that reads nothing while 8 MiB are published, eight times the
// slow-client bound, is held back, not cut: the follower takes nothing more from the topic while
// the output is past the high-water mark, and sends a batch in pieces (with Seq) that fit
// between the mark and MaxQueued. Once the client reads, every message comes, in order, on the
// same connection.
func TestFollowSlowClient(t *testing.T) {
	const n, size = 512, 16 << 10
	tp := wait.NewTopic[string](n)
	var conn *Conn
	most := 0    // the most the output held with a batch, on the loop
	drained := 0 // the application's Drained calls, on the loop
	report := make(chan [2]int, 1)
	f := &Feed[string]{Topic: tp, CaughtUp: true, Seq: func(m string) uint64 {
		seq, _ := strconv.ParseUint(m[:strings.IndexByte(m, ' ')], 10, 64)
		return seq
	}}
	f.Encode = func(b []byte, msgs []string, last uint64, err error) []byte {
		most = max(most, conn.hc.Buffered())
		return encodeBatch(b, msgs, last, err)
	}
	ev := &Events{
		Open:    func(c *Conn) { conn = c },
		Drained: func(*Conn) { drained++ },
		Message: func(*Conn, MessageType, []byte) { report <- [2]int{most, drained} },
	}
	_, addr := followServer(t, f, nil, ev, core.Options{})
	c := dialSmallWindow(t, addr)
	c.upgrade(0)
	if got := c.batch(); got != "0|nil|" {
		t.Fatalf("caught up: %q", got)
	}
	pad := strings.Repeat("x", size)
	for i := 1; i <= n; i++ {
		tp.Publish(strconv.Itoa(i) + " " + pad)
	}
	limit := defaultMaxQueued - 256<<10
	for cursor := uint64(0); cursor < n; {
		b := strings.SplitN(c.batch(), "|", 3)
		if len(b[2]) > limit {
			t.Fatalf("a batch of %d bytes, more than MaxQueued less the high-water mark", len(b[2]))
		}
		for _, m := range strings.Split(b[2], ",") {
			if m != strconv.FormatUint(cursor+1, 10)+" "+pad {
				t.Fatalf("after %d: %.20q", cursor, m)
			}
			cursor++
		}
		if last, _ := strconv.ParseUint(b[0], 10, 64); last != cursor {
			t.Fatalf("a batch up to %d says last %s", cursor, b[0])
		}
	}
	c.send(frame.Text, "report")
	r := coretest.Receive(t, "the counters", report)
	if r[0] > 256<<10 || r[1] == 0 {
		t.Fatalf("%d bytes queued when a batch was taken, over the high-water mark; %d Drained", r[0], r[1])
	}
}

// TestFollowPolicy: a batch too large for MaxQueued, sent whole (no Seq), meets the
// connection's slow-client policy: DropMessages drops it and goes on after it; CloseSlowClient
// closes the connection with 1008. With Seq it is split and sent.
func TestFollowPolicy(t *testing.T) {
	seq := func(m string) uint64 { n, _ := strconv.ParseUint(m[:strings.IndexByte(m, ' ')], 10, 64); return n }
	for _, tc := range []struct {
		name   string
		policy SlowClientPolicy
		seq    func(string) uint64
	}{
		{"drop", DropMessages, nil},
		{"close", CloseSlowClient, nil},
		{"split", CloseSlowClient, seq},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := wait.NewTopic[string](64)
			pad := strings.Repeat("y", 4<<10)
			for i := 1; i <= 32; i++ {
				tp.Publish(strconv.Itoa(i) + " " + pad) // 128 KiB in all
			}
			f := &Feed[string]{Topic: tp, Encode: encodeBatch, CaughtUp: true, Seq: tc.seq}
			o := &Options{MaxQueued: 64 << 10, SlowClient: tc.policy}
			_, addr := followServer(t, f, o, nil, core.Options{WriteHighWater: 16 << 10})
			if tc.name == "close" {
				// The connection is dropped at once, its output with it: the 101 too, here.
				c := &client{Conn: coretest.Dial(t, addr)}
				c.Send(upgradeRequest("/?after=0"))
				var ne net.Error
				if _, err := c.R.ReadString(0); err == nil || errors.As(err, &ne) && ne.Timeout() {
					t.Fatalf("the connection still open: %v", err)
				}
				return
			}
			c := dialAfter(t, addr, 0)
			switch tc.name {
			case "drop":
				if got := c.batch(); got != "32|nil|" {
					t.Fatalf("after the batch dropped: %.40q, want the sign of caught up", got)
				}
				tp.Publish("33 x")
				if got := c.batch(); got != "33|nil|33 x" {
					t.Fatalf("then %.40q", got)
				}
			case "split":
				pieces := 0
				for cursor := uint64(0); cursor < 32; pieces++ {
					b := strings.SplitN(c.batch(), "|", 3)
					if len(b[2]) > 48<<10 {
						t.Fatalf("a piece of %d bytes, over MaxQueued less the high-water mark", len(b[2]))
					}
					cursor += uint64(strings.Count(b[2], ",") + 1)
					if b[0] != strconv.FormatUint(cursor, 10) {
						t.Fatalf("a piece up to %d says last %s", cursor, b[0])
					}
				}
				if got := c.batch(); got != "32|nil|" || pieces < 3 {
					t.Fatalf("after %d pieces: %.40q", pieces, got)
				}
			}
		})
	}
}

// TestFollowHeartbeat: with nothing new for Heartbeat, the follower sends a message of none
// with ErrTimeout and its cursor, and goes on.
func TestFollowHeartbeat(t *testing.T) {
	tp := wait.NewTopic[string](4)
	tp.Publish("a")
	f := &Feed[string]{Topic: tp, Encode: encodeBatch, Heartbeat: 50 * time.Millisecond}
	_, addr := followServer(t, f, nil, nil, core.Options{})
	c := dialAfter(t, addr, 0)
	if got := c.batch(); got != "1|nil|a" {
		t.Fatal(got)
	}
	start := time.Now()
	if got := c.batch(); got != "1|timeout|" {
		t.Fatal(got)
	}
	if d := time.Since(start); d < 45*time.Millisecond {
		t.Fatalf("the heartbeat came after %v", d)
	}
	tp.Publish("b")
	if got := c.batch(); got != "2|nil|b" {
		t.Fatal(got)
	}
}

// failingSource waits, then ends the following with its error when told to.
type failingSource struct {
	err  error
	fail chan core.Waker
}

func (s *failingSource) OnNext(c *core.Ctx, after uint64, _ time.Duration, k func(*core.Ctx, []string, uint64, error)) {
	s.fail <- c.Waker()
	c.Detach(0, func(c *core.Ctx, err error) { k(c, nil, after, err) })
}

// TestFollowSourceError: an error of the Source's own ends the following: End says what the
// client hears (here a message, then a close of its choosing); without End the connection
// closes with 1011. The application's Events go on until then, and its Close comes once.
func TestFollowSourceError(t *testing.T) {
	ended := errors.New("the history ended")
	for _, withEnd := range []bool{true, false} {
		t.Run(fmt.Sprint("End=", withEnd), func(t *testing.T) {
			src := &failingSource{err: ended, fail: make(chan core.Waker, 1)}
			f := &Feed[string]{Topic: src, Encode: encodeBatch}
			if withEnd {
				f.End = func(c *Conn, err error) {
					c.Send(Text, []byte("end: "+err.Error()))
					c.Close(4000, "ended")
				}
			}
			closes := make(chan error, 2)
			ev := &Events{
				Message: func(c *Conn, typ MessageType, data []byte) { c.Send(typ, data) },
				Close:   func(_ *Conn, err error) { closes <- err },
			}
			_, addr := followServer(t, f, nil, ev, core.Options{})
			c := dialAfter(t, addr, 0)
			w := coretest.Receive(t, "the follower waiting", src.fail)
			c.send(frame.Text, "echo")
			c.expect(frame.Text, "echo")
			w.Wake(ended)
			if withEnd {
				c.expect(frame.Text, "end: the history ended")
				c.answerClose(4000)
			} else {
				c.expectClose(CloseInternalError)
			}
			coretest.Receive(t, "the application's Close", closes)
			if f.following.Load() != 0 {
				t.Fatalf("%d following", f.following.Load())
			}
		})
	}
}

// TestFollowShutdown: a shutdown closes the followers with 1001 at once, not at the end of its
// grace period, and their requests end.
func TestFollowShutdown(t *testing.T) {
	tp := wait.NewTopic[string](4)
	f := &Feed[string]{Topic: tp, Encode: encodeBatch, CaughtUp: true}
	s, addr := followServer(t, f, nil, nil, core.Options{Loops: 2})
	var clients []*client
	for range 4 {
		c := dialAfter(t, addr, 0)
		if got := c.batch(); got != "0|nil|" {
			t.Fatal(got)
		}
		clients = append(clients, c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*coretest.Patience)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(ctx) }()
	for _, c := range clients {
		c.answerClose(CloseGoingAway)
	}
	if err := coretest.Receive(t, "the shutdown", shut); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if n := f.following.Load(); n != 0 {
		t.Fatalf("%d still following", n)
	}
}

// TestFollowSequential: Follow refuses a connection of the sequential style.
func TestFollowSequential(t *testing.T) {
	f := &Feed[string]{Topic: wait.NewTopic[string](1), Encode: encodeBatch}
	got := make(chan error, 1)
	_, addr := coretest.Serve(t, func(cx *core.Ctx) {
		c, err := Accept(cx, nil)
		if err != nil {
			return
		}
		got <- f.Follow(cx, c, 0)
		c.Close(CloseNormal, "")
	}, core.Options{})
	c, _ := dial(t, addr)
	if err := coretest.Receive(t, "Follow's error", got); err != errFollowSequential {
		t.Fatalf("Follow on an Accept connection: %v", err)
	}
	c.answerClose(CloseNormal)
}
