package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/wait"
	"github.com/dwellhttp/dwell/wait/jetstream/jetstreamtest"
	"github.com/nats-io/nats.go"
)

// TestPublishReachesEveryInstance: polls parked on instance B, on two loops and in both forms,
// are all answered by one message published on instance A.
func TestPublishReachesEveryInstance(t *testing.T) {
	ns := jetstreamtest.New(t)
	ncA, ncB := jetstreamtest.Connect(t, ns.URL()), jetstreamtest.Connect(t, ns.URL())
	createStream(t, ncA)
	a, b := newTopic(t, ncA, 100), newTopic(t, ncB, 100)
	pb := servePolls(t, b, 2)
	const n = 40
	polls := make([]<-chan string, n)
	for i := range polls {
		path := "/"
		if i%2 == 1 {
			path = "/k"
		}
		polls[i] = pb.start(t, path+"?after=0&ms=20000")
	}
	waitFor(t, "polls in the handler", func() bool { return pb.entered.Load() == n })
	seq := publish(t, a, "hello")
	if seq != 1 {
		t.Fatalf("first message has sequence %d", seq)
	}
	if got := a.Last(); got != seq {
		t.Fatalf("A's Last() = %d right after its Publish returned %d", got, seq)
	}
	for i, ch := range polls {
		if got := receive(t, ch); got != "1:hello;nil" {
			t.Fatalf("poll %d: %q", i, got)
		}
	}
	if got := b.Last(); got != 1 {
		t.Fatalf("B's Last() = %d", got)
	}
}

// TestHistoryFromMemoryAndStream: instances A and B publish in turn; a poll on B with any
// cursor gets what came after it in one order — from memory for recent cursors, from the stream
// for older ones, a page of History at a time — and a new instance serves the whole history.
func TestHistoryFromMemoryAndStream(t *testing.T) {
	ns := jetstreamtest.New(t)
	ncA, ncB := jetstreamtest.Connect(t, ns.URL()), jetstreamtest.Connect(t, ns.URL())
	createStream(t, ncA)
	const history = 4
	a, b := newTopic(t, ncA, history), newTopic(t, ncB, history)
	var want []string
	var last uint64
	for i := range 10 {
		tp := a
		if i%2 == 1 {
			tp = b
		}
		want = append(want, fmt.Sprint(i))
		last = publish(t, tp, want[i])
		if i == 4 {
			// A message on another subject of the stream takes a sequence number.
			if _, err := jsPublish(ncA, "chat.other", "not the topic's"); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor(t, "B has received everything", func() bool { return b.Last() == last })
	pb := servePolls(t, b, 1)
	for _, path := range []string{"/", "/k"} {
		if got := follow(t, pb, path, 0, last); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s from 0: %v, want %v", path, got, want)
		}
	}
	// A recent cursor comes from memory, in one answer.
	if got := pb.get(t, fmt.Sprintf("/?after=%d&ms=1000", last-2)); got != fmt.Sprintf("%d:8,9;nil", last) {
		t.Fatalf("recent cursor: %q", got)
	}
	// An old one from the stream, a page of History messages.
	if got := pb.get(t, "/?after=0&ms=1000"); got != "4:0,1,2,3;nil" {
		t.Fatalf("old cursor: %q", got)
	}

	ncC := jetstreamtest.Connect(t, ns.URL())
	c := newTopic(t, ncC, history)
	if c.Last() != last {
		t.Fatalf("a new instance starts at %d, want %d", c.Last(), last)
	}
	pc := servePolls(t, c, 1)
	if got := follow(t, pc, "/", 0, last); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("new instance from 0: %v, want %v", got, want)
	}
	msgs, cursor, err := c.Since(context.Background(), 3)
	if err != nil || cursor != 8 || strings.Join(msgs, ",") != "3,4,5,6" { // seq 6 is chat.other's
		t.Fatalf("Since(3) = %v %d %v", msgs, cursor, err)
	}
}

// follow polls from cursor until it reaches last and returns every message seen, in order.
func follow(t *testing.T, p *poller, path string, cursor, last uint64) []string {
	t.Helper()
	var got []string
	for cursor < last {
		body := p.get(t, fmt.Sprintf("%s?after=%d&ms=5000", path, cursor))
		next, msgs, e := parseReply(body)
		if e != "nil" || next <= cursor {
			t.Fatalf("poll after %d: %q", cursor, body)
		}
		if msgs != "" {
			got = append(got, strings.Split(msgs, ",")...)
		}
		cursor = next
	}
	return got
}

// parseReply splits a poll's answer, "last:m1,m2;err".
func parseReply(body string) (last uint64, msgs, err string) {
	head, err, _ := strings.Cut(body, ";")
	n, msgs, _ := strings.Cut(head, ":")
	last, _ = strconv.ParseUint(n, 10, 64)
	return last, msgs, err
}

// jsPublish publishes straight to JetStream, past any Topic.
func jsPublish(nc *nats.Conn, subject, data string) (uint64, error) {
	js, err := nc.JetStream()
	if err != nil {
		return 0, err
	}
	ack, err := js.Publish(subject, []byte(data))
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}

// TestCursorAheadOfStream: a cursor ahead of the stream (from a stream created anew) counts as
// its last sequence number: a poll with it waits for the next message, and gets the stream's
// cursor back when its timeout passes.
func TestCursorAheadOfStream(t *testing.T) {
	ns := jetstreamtest.New(t)
	nc := jetstreamtest.Connect(t, ns.URL())
	createStream(t, nc)
	tp := newTopic(t, nc, 10)
	publish(t, tp, "x")
	p := servePolls(t, tp, 1)
	for _, path := range []string{"/", "/k"} {
		start := time.Now()
		if got := p.get(t, path+"?after=999&ms=300"); got != "1:;"+wait.ErrTimeout.Error() {
			t.Fatalf("%s: %q", path, got)
		}
		if d := time.Since(start); d < 250*time.Millisecond {
			t.Fatalf("%s: answered after %v, before its timeout", path, d)
		}
	}
}

// TestDecodeRefusal: a message Decode refuses is skipped; cursors pass over it.
func TestDecodeRefusal(t *testing.T) {
	ns := jetstreamtest.New(t)
	nc := jetstreamtest.Connect(t, ns.URL())
	createStream(t, nc)
	tp := newTopic(t, nc, 10)
	p := servePolls(t, tp, 1)
	publish(t, tp, "a", "bad", "b")
	waitFor(t, "received", func() bool { return tp.Last() == 3 })
	if got := p.get(t, "/?after=0&ms=1000"); got != "3:a,b;nil" {
		t.Fatalf("%q", got)
	}
	poll := p.start(t, "/?after=3&ms=20000")
	publish(t, tp, "bad")
	publish(t, tp, "c")
	if got := receive(t, poll); got != "5:c;nil" {
		t.Fatalf("%q", got)
	}
}

// TestNewRefusesReconnectBuffer: a connection that would send a failed publish later is
// refused, with the option that fixes it in the message.
func TestNewRefusesReconnectBuffer(t *testing.T) {
	ns := jetstreamtest.New(t)
	nc, err := nats.Connect(ns.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_, err = New(context.Background(), nc, Config[string]{Stream: testStream, Subject: testSubject, Decode: decodeString})
	if err == nil || !strings.Contains(err.Error(), "nats.ReconnectBufSize(-1)") {
		t.Fatalf("New with a reconnect buffer: %v", err)
	}
}

// TestShutdownAnswersPolls: a shutdown answers parked polls at once with ErrShutdown.
func TestShutdownAnswersPolls(t *testing.T) {
	ns := jetstreamtest.New(t)
	nc := jetstreamtest.Connect(t, ns.URL())
	createStream(t, nc)
	tp := newTopic(t, nc, 10)
	p := servePolls(t, tp, 1)
	polls := []<-chan string{p.start(t, "/?after=0&ms=60000"), p.start(t, "/k?after=0&ms=60000")}
	waitFor(t, "polls in the handler", func() bool { return p.entered.Load() == 2 })
	ctx, cancel := context.WithTimeout(context.Background(), coretest.Patience)
	defer cancel()
	go p.srv.Shutdown(ctx)
	for _, poll := range polls {
		if got := receive(t, poll); got != "0:;"+wait.ErrShutdown.Error() {
			t.Fatalf("%q", got)
		}
	}
}

// TestNATSRestart: while NATS is down a publish fails with ErrUnavailable and parked polls stay
// parked; once it is back on its store, the history is intact without the refused message, and
// the first message published wakes the polls.
func TestNATSRestart(t *testing.T) {
	ns := jetstreamtest.New(t)
	ncA, ncB := jetstreamtest.Connect(t, ns.URL()), jetstreamtest.Connect(t, ns.URL())
	createStream(t, ncA)
	a, b := newTopic(t, ncA, 10), newTopic(t, ncB, 10)
	last := publish(t, a, "before")
	waitFor(t, "B received", func() bool { return b.Last() == last })
	pb := servePolls(t, b, 2)
	polls := []<-chan string{pb.start(t, "/?after=1&ms=60000"), pb.start(t, "/k?after=1&ms=60000")}
	waitFor(t, "polls in the handler", func() bool { return pb.entered.Load() == 2 })

	ns.Stop()
	waitFor(t, "A notices", func() bool { return ncA.Status() != nats.CONNECTED })
	if _, err := a.Publish(context.Background(), []byte("refused")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Publish with NATS down: %v", err)
	}
	ns.Start()
	var seq uint64
	waitFor(t, "a publish succeeds again", func() bool {
		var err error
		seq, err = a.Publish(context.Background(), []byte("after"))
		return err == nil
	})
	if seq != 2 {
		t.Fatalf("the message after the restart has sequence %d, want 2", seq)
	}
	for _, poll := range polls {
		if got := receive(t, poll); got != "2:after;nil" {
			t.Fatalf("%q", got)
		}
	}
}

// TestResyncAfterDisconnect: messages published by another instance while this one was cut off
// from NATS arrive once it reconnects, in order, once each, and wake its parked polls.
func TestResyncAfterDisconnect(t *testing.T) {
	ns := jetstreamtest.New(t)
	px := startProxy(t, strings.TrimPrefix(ns.URL(), "nats://"))
	ncA, ncB := jetstreamtest.Connect(t, ns.URL()), jetstreamtest.Connect(t, px.url())
	createStream(t, ncA)
	a, b := newTopic(t, ncA, 10), newTopic(t, ncB, 10)
	pb := servePolls(t, b, 1)
	poll := pb.start(t, "/?after=0&ms=60000")
	waitFor(t, "poll in the handler", func() bool { return pb.entered.Load() == 1 })

	px.cut()
	waitFor(t, "B notices", func() bool { return ncB.Status() != nats.CONNECTED })
	last := publish(t, a, "one", "two", "three")
	px.restore()
	// The poll is woken by the first of them, or by several in one go.
	switch got := receive(t, poll); got {
	case "1:one;nil", "2:one,two;nil", "3:one,two,three;nil":
	default:
		t.Fatalf("%q", got)
	}
	waitFor(t, "B has resynchronised", func() bool { return b.Last() == last })
	if got := follow(t, pb, "/", 0, last); strings.Join(got, ",") != "one,two,three" {
		t.Fatalf("after the reconnection: %v", got)
	}
}

// TestOnNextFromContinuation: a continuation that waits again with a cursor older than the
// process's memory is answered from the stream, without a coroutine to park.
func TestOnNextFromContinuation(t *testing.T) {
	ns := jetstreamtest.New(t)
	nc := jetstreamtest.Connect(t, ns.URL())
	createStream(t, nc)
	tp := newTopic(t, nc, 2)
	publish(t, tp, "m1", "m2", "m3", "m4")
	waitFor(t, "received", func() bool { return tp.Last() == 4 })
	var entered atomic.Int32
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		entered.Add(1)
		tp.OnNext(c, 4, coretest.Patience, func(c *core.Ctx, msgs []string, last uint64, err error) {
			if err != nil {
				reply(c, msgs, last, err)
				return
			}
			tp.OnNext(c, 0, coretest.Patience, reply) // from the continuation, older than memory
		})
	}, core.Options{})
	p := &poller{tp: tp, addr: addr}
	poll := p.start(t, "/")
	waitFor(t, "poll in the handler", func() bool { return entered.Load() == 1 })
	publish(t, tp, "m5")
	if got := receive(t, poll); got != "2:m1,m2;nil" {
		t.Fatalf("%q", got)
	}
}

// TestOldCursorWhileNATSDown: a cursor older than memory cannot be answered while NATS is
// away: the poll fails with ErrUnavailable rather than with a partial history.
func TestOldCursorWhileNATSDown(t *testing.T) {
	ns := jetstreamtest.New(t)
	nc := jetstreamtest.Connect(t, ns.URL())
	createStream(t, nc)
	tp := newTopic(t, nc, 1)
	publish(t, tp, "a", "b", "c")
	waitFor(t, "received", func() bool { return tp.Last() == 3 })
	p := servePolls(t, tp, 1)
	ns.Stop()
	for _, path := range []string{"/", "/k"} {
		got := p.get(t, path+"?after=0&ms=1000")
		if !strings.HasPrefix(got, "0:;"+ErrUnavailable.Error()) {
			t.Fatalf("%s: %q", path, got)
		}
	}
	if got := p.get(t, "/?after=2&ms=1000"); got != "3:c;nil" {
		t.Fatalf("a cursor memory covers: %q", got)
	}
}
