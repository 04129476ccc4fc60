package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// queued returns the bytes of q's items, in order, and checks the size accounting.
func queued(t *testing.T, q *WriteQueue) string {
	t.Helper()
	var sb strings.Builder
	var n int64
	for _, it := range q.items {
		if it.kind != itemBytes {
			t.Fatalf("item of kind %d in the queue", it.kind)
		}
		sb.Write(it.b[it.off:])
		n += it.len()
	}
	if n != q.size {
		t.Fatalf("queue size %d, its items hold %d", q.size, n)
	}
	return sb.String()
}

// respond queues one small response as a handler and commit do: a body behind the head's
// placeholder, then the head built in headRoom and put in the placeholder.
func respond(q *WriteQueue, pool *OutPool, head, body string, more bool) {
	q.ReserveHead(pool)
	q.Write(pool, []byte(body))
	h := q.HeadRoom(pool, len(head)+len(body), more)
	h = append(h, head...)
	q.FillHead(pool, h)
}

// Pipelined responses share one buffer, each head built behind the response before it, so
// that a batch leaves as one; and they are queued whole and in order either way.
func TestSmallResponsesShareABuffer(t *testing.T) {
	var pool OutPool
	var q WriteQueue
	var want strings.Builder
	for i := range 16 {
		head, body := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-N: %d\r\n\r\n", i), fmt.Sprintf("b%04d", i)
		respond(&q, &pool, head, body, true)
		want.WriteString(head + body)
	}
	if got := queued(t, &q); got != want.String() {
		t.Fatalf("queued:\n%q\nwant:\n%q", got, want.String())
	}
	if len(q.items) != 1 {
		t.Fatalf("16 small pipelined responses in %d buffers, want 1", len(q.items))
	}

	// With no more expected, a response takes a buffer of its size: the next cannot join it.
	q.Release(&pool, 0)
	respond(&q, &pool, "HEAD1\r\n\r\n", "one", false)
	respond(&q, &pool, strings.Repeat("H", 5000)+"\r\n\r\n", "two", true)
	if got, want := queued(t, &q), "HEAD1\r\n\r\none"+strings.Repeat("H", 5000)+"\r\n\r\ntwo"; got != want {
		t.Fatalf("queued %q…, want %q…", got[:20], want[:20])
	}
	if len(q.items) != 2 {
		t.Fatalf("%d buffers, want 2", len(q.items))
	}
}

// TestCompact: a little queued in chunks moves into one buffer of its size, partly sent bytes
// left out; a queue as large as its buffers, or larger than compactMax, stays as it is.
func TestCompact(t *testing.T) {
	var pool OutPool
	var q WriteQueue
	q.Write(&pool, []byte("hello"))
	q.push(&pool, item{b: append(pool.Get(MinChunkSize), ", world"...), off: 2})
	q.size += 5
	q.Compact(&pool)
	if got := queued(t, &q); got != "helloworld" || len(q.items) != 1 || cap(q.items[0].b) != 64 {
		t.Fatalf("compacted: %q in %d items, a buffer of %d", got, len(q.items), cap(q.items[0].b))
	}
	q.Compact(&pool) // its buffer is its size's already
	if len(q.items) != 1 || cap(q.items[0].b) != 64 {
		t.Fatalf("compacted again: %d items, a buffer of %d", len(q.items), cap(q.items[0].b))
	}
	q.Release(&pool, 0)

	big := strings.Repeat("x", compactMax+1)
	q.Write(&pool, []byte(big))
	q.Compact(&pool)
	if got := queued(t, &q); got != big || cap(q.items[0].b) != MinChunkSize {
		t.Fatalf("a queue over compactMax: a buffer of %d", cap(q.items[0].b))
	}
}

// A trickle is a Sender whose socket takes room bytes, then is full (EAGAIN) until given more.
type trickle struct {
	room int
	got  []byte
}

func (s *trickle) Writev(iov *netpoll.IOVecs, _ bool) (int, netpoll.Errno) {
	n := 0
	for i := 0; i < iov.Len() && s.room > 0; i++ {
		b := iov.At(i)[:min(len(iov.At(i)), s.room)]
		s.got = append(s.got, b...)
		s.room -= len(b)
		n += len(b)
	}
	if n == 0 {
		return 0, netpoll.EAGAIN
	}
	return n, 0
}

func (s *trickle) Sendfile(netpoll.File, *int64, int) (int, netpoll.Errno) { return 0, netpoll.EIO }
func (s *trickle) Async() (AsyncWriter, int)                               { return nil, 0 }

// TestSendInOrder: what is queued leaves before what Send is given, a full socket keeps the rest
// queued (the caller's bytes copied in), and the next Send goes on where the last stopped.
func TestSendInOrder(t *testing.T) {
	var pool OutPool
	var q WriteQueue
	iov := netpoll.NewIOVecs(MaxIOVecs)
	q.Write(&pool, []byte("queued "))
	q.PushBuffer(&pool, append(pool.Get(7), "pushed "...))
	s := &trickle{room: 10}
	progressed, err := q.Send(s, iov, &pool, []byte("and given"))
	if !progressed || err != nil || string(s.got) != "queued pus" {
		t.Fatalf("first send: %v, %v, sent %q", progressed, err, s.got)
	}
	if got := queued(t, &q); got != "hed and given" {
		t.Fatalf("left queued: %q", got)
	}
	if progressed, err := q.Send(s, iov, &pool, nil); progressed || err != nil {
		t.Fatalf("a send to a full socket: %v, %v", progressed, err)
	}
	s.room = 100
	if _, err := q.Send(s, iov, &pool, nil); err != nil || string(s.got) != "queued pushed and given" || q.Size() != 0 {
		t.Fatalf("sent %q, %d left, %v", s.got, q.Size(), err)
	}
	q.Write(&pool, []byte("whole"))
	if b, ok := q.Whole(); !ok || string(b) != "whole" {
		t.Fatalf("Whole: %q, %v", b, ok)
	}
	q.Consume(&pool, len("whole"))
	if q.Size() != 0 || queued(t, &q) != "" {
		t.Fatalf("after Consume: %d bytes", q.Size())
	}
}

// TestTakeWhole: the bytes of a queue that are all of one buffer, none sent, move out with
// it, leaving the queue empty, and into another queue as they stand; a queue of two buffers, or
// one partly sent, keeps its bytes.
func TestTakeWhole(t *testing.T) {
	var pool OutPool
	var q, dst WriteQueue
	q.Write(&pool, []byte("the body"))
	b, ok := q.TakeWhole(&pool)
	if !ok || string(b) != "the body" || q.Size() != 0 || queued(t, &q) != "" {
		t.Fatalf("took %q (%v); left %d bytes", b, ok, q.Size())
	}
	dst.Write(&pool, []byte("head "))
	dst.PushBuffer(&pool, b)
	if got := queued(t, &dst); got != "head the body" {
		t.Fatalf("the other queue holds %q", got)
	}

	q.Write(&pool, []byte("one"))
	q.PushBuffer(&pool, append(pool.Get(3), "two"...))
	if _, ok := q.TakeWhole(&pool); ok || queued(t, &q) != "onetwo" {
		t.Fatalf("two buffers taken as one: %v, %q left", ok, queued(t, &q))
	}
	q.Release(&pool, 0)

	q.Write(&pool, []byte("partly sent"))
	s := &trickle{room: 2}
	if _, err := q.Send(s, netpoll.NewIOVecs(MaxIOVecs), &pool, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := q.TakeWhole(&pool); ok || queued(t, &q) != "rtly sent" {
		t.Fatalf("a buffer partly sent taken: %v, %q left", ok, queued(t, &q))
	}
}
