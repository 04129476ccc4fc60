package core

import (
	"fmt"
	"strings"
	"testing"
)

// queued returns the bytes of q's items, in order, and checks the size accounting.
func queued(t *testing.T, q *writeQueue) string {
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
func respond(q *writeQueue, pool *outPool, head, body string, more bool) {
	q.reserveHead(pool)
	q.write(pool, []byte(body))
	h := q.headRoom(pool, len(head)+len(body), more)
	h = append(h, head...)
	q.fillHead(pool, h)
}

// Pipelined responses share one buffer, each head built behind the response before it, so
// that a batch leaves as one; and they are queued whole and in order either way.
func TestSmallResponsesShareABuffer(t *testing.T) {
	var pool outPool
	var q writeQueue
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
	q.release(&pool)
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
	var pool outPool
	var q writeQueue
	q.write(&pool, []byte("hello"))
	q.push(&pool, outItem{b: append(pool.Get(minChunkSize), ", world"...), off: 2})
	q.size += 5
	q.compact(&pool)
	if got := queued(t, &q); got != "helloworld" || len(q.items) != 1 || cap(q.items[0].b) != 64 {
		t.Fatalf("compacted: %q in %d items, a buffer of %d", got, len(q.items), cap(q.items[0].b))
	}
	q.compact(&pool) // its buffer is its size's already
	if len(q.items) != 1 || cap(q.items[0].b) != 64 {
		t.Fatalf("compacted again: %d items, a buffer of %d", len(q.items), cap(q.items[0].b))
	}
	q.release(&pool)

	big := strings.Repeat("x", compactMax+1)
	q.write(&pool, []byte(big))
	q.compact(&pool)
	if got := queued(t, &q); got != big || cap(q.items[0].b) != minChunkSize {
		t.Fatalf("a queue over compactMax: a buffer of %d", cap(q.items[0].b))
	}
}
