package engine

import (
	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/internal/bufpool"
)

// A WriteQueue holds a connection's output in order until the socket takes it: byte chunks from
// the loop's pool and file segments that go out with sendfile. Pipelined responses gather here
// and leave together in one writev.
//
// While a handler writes a body whose head is not known yet (its length is decided when the
// handler returns), the queue holds a placeholder for that head, followed by the body: output
// before the placeholder (earlier responses) can be sent, nothing after it until the head
// fills it. So a body is buffered where it will be sent from, and never copied again.
type WriteQueue struct {
	items []item
	size  int64 // bytes queued, file segments included
}

// Size returns the bytes queued, file segments included.
func (q *WriteQueue) Size() int64 { return q.size }

// An item is a pooled buffer whose unsent bytes are b[off:], a file segment, or the
// placeholder for a response head.
type item struct {
	b    []byte
	off  int32
	kind itemKind
	file netpoll.File // a file segment's file
	foff int64        // file segment: next offset
	fn   int64        // file segment: bytes left
}

type itemKind uint8

const (
	itemBytes itemKind = iota
	itemFile
	itemHead // placeholder for a response head not written yet
)

// An OutPool is a loop's pool for its connections' output: the byte buffers, and the short
// item arrays a queue's items live in. A queue takes an array when it gets its first item and
// gives it back when it empties, so that an idle connection holds none (a WebSocket between
// messages, a keep-alive connection between requests) and a busy one allocates none.
type OutPool struct {
	bufpool.Pool
	items []*[queueItems]item
}

// queueItems is the length of the arrays an OutPool lends: enough for a response's head, body
// and a file segment, or a few pipelined responses; a queue that needs more grows its own.
const queueItems = 4

// itemArraysMax bounds the idle item arrays a loop keeps: as many as a broadcast to a few
// thousand connections in one turn takes (768 KiB of them at most).
const itemArraysMax = 4096

// push appends it to the queue, taking an item array from the pool for the first.
func (q *WriteQueue) push(pool *OutPool, it item) {
	if q.items == nil {
		if n := len(pool.items); n > 0 {
			q.items = pool.items[n-1][:0]
			pool.items[n-1] = nil
			pool.items = pool.items[:n-1]
		} else {
			q.items = new([queueItems]item)[:0]
		}
	}
	q.items = append(q.items, it)
}

// empty gives the emptied queue's item array back to the pool: the pool's own, that is; one
// the queue grew itself is left to the collector.
func (q *WriteQueue) empty(pool *OutPool) {
	clear(q.items)
	if cap(q.items) == queueItems && len(pool.items) < itemArraysMax {
		pool.items = append(pool.items, (*[queueItems]item)(q.items[:queueItems]))
	}
	q.items = nil
}

const (
	// MaxIOVecs is the most buffers one Writev carries: the size of the loop's IOVecs.
	MaxIOVecs = 64
	// MinChunkSize is the least a chunk of the queue holds, and MaxChunkSize the most.
	MinChunkSize = 4 << 10
	MaxChunkSize = 64 << 10
)

// Write appends a copy of p.
func (q *WriteQueue) Write(pool *OutPool, p []byte) {
	for len(p) > 0 {
		t := q.tail()
		if t == nil || cap(t.b) == len(t.b) {
			q.push(pool, item{b: pool.Get(min(max(len(p), MinChunkSize), MaxChunkSize))})
			t = &q.items[len(q.items)-1]
		}
		n := copy(t.b[len(t.b):cap(t.b)], p)
		t.b = t.b[:len(t.b)+n]
		q.size += int64(n)
		p = p[n:]
	}
}

// tail returns the last item if it is a byte item.
func (q *WriteQueue) tail() *item {
	if len(q.items) == 0 {
		return nil
	}
	t := &q.items[len(q.items)-1]
	if t.kind != itemBytes {
		return nil
	}
	return t
}

// Spare returns the free space of the tail buffer, at least n bytes, as an empty slice to
// append to; filled then accounts for what was appended. The server's refusals and a small
// file's bytes are written this way, straight into the queue (a response head goes into
// HeadRoom's room and fillHead).
func (q *WriteQueue) Spare(pool *OutPool, n int) []byte {
	t := q.tail()
	if t == nil || cap(t.b)-len(t.b) < n {
		q.push(pool, item{b: pool.Get(min(max(n, MinChunkSize), MaxChunkSize))})
		t = &q.items[len(q.items)-1]
	}
	return t.b[len(t.b):len(t.b)]
}

// PushBuffer queues b, a buffer of pool's, as it stands: the queue owns it from now on. A write
// alone in the queue (a broadcast's frame to each of thousands of connections in one turn)
// takes a buffer of its size this way rather than a chunk of MinChunkSize.
func (q *WriteQueue) PushBuffer(pool *OutPool, b []byte) {
	q.push(pool, item{b: b})
	q.size += int64(len(b))
}

// Whole returns the unsent bytes of the queue when they are all in one buffer, for a caller
// that sends them its own way and then gives them back with Consume.
func (q *WriteQueue) Whole() ([]byte, bool) {
	if len(q.items) != 1 || q.items[0].kind != itemBytes {
		return nil, false
	}
	it := &q.items[0]
	return it.b[it.off:], true
}

// TakeWhole removes the queue's bytes when they are all of one buffer and none has been sent,
// and returns that buffer, the caller's from now on: to move into another queue (PushBuffer)
// rather than copy it there.
func (q *WriteQueue) TakeWhole(pool *OutPool) ([]byte, bool) {
	if len(q.items) != 1 || q.items[0].kind != itemBytes || q.items[0].off != 0 {
		return nil, false
	}
	b := q.items[0].b
	q.empty(pool)
	q.size = 0
	return b, true
}

// Filled accounts for bytes appended to the slice spare returned. If the appends outgrew it
// (the estimate was short), they are copied in instead (see inSpare).
func (q *WriteQueue) Filled(pool *OutPool, b []byte) {
	if n := len(q.items); n > 0 && q.inSpare(n-1, b) {
		t := &q.items[n-1]
		t.b = t.b[:len(t.b)+len(b)]
		q.size += int64(len(b))
		return
	}
	q.Write(pool, b)
}

// AppendFile queues n bytes of the file f from offset off.
func (q *WriteQueue) AppendFile(pool *OutPool, f netpoll.File, off, n int64) {
	q.push(pool, item{kind: itemFile, file: f, foff: off, fn: n})
	q.size += n
}

func (q *WriteQueue) HasFile() bool {
	for i := range q.items {
		if q.items[i].kind == itemFile {
			return true
		}
	}
	return false
}

// headAt returns the index of the head placeholder, or -1.
func (q *WriteQueue) headAt() int {
	for i := len(q.items) - 1; i >= 0; i-- {
		if q.items[i].kind == itemHead {
			return i
		}
	}
	return -1
}

// ReserveHead appends the placeholder for a response head, unless there is one.
func (q *WriteQueue) ReserveHead(pool *OutPool) {
	if q.headAt() < 0 {
		q.push(pool, item{kind: itemHead})
	}
}

// HeadRoom returns an empty slice with room for n bytes to build a response head in: the spare
// room of the buffer queued just before the head's placeholder, when there is that much —
// pipelined responses then share one buffer, and leave as one — or else a pooled buffer, of
// at least MinChunkSize when more responses are expected to follow it (more).
func (q *WriteQueue) HeadRoom(pool *OutPool, n int, more bool) []byte {
	if i := q.headAt(); i > 0 {
		if prev := &q.items[i-1]; prev.kind == itemBytes && cap(prev.b)-len(prev.b) >= n {
			return prev.b[len(prev.b):len(prev.b)]
		}
	}
	if more {
		n = max(n, MinChunkSize)
	}
	return pool.Get(n)
}

// inSpare reports whether b lies in the spare room of item j's buffer, where headRoom hands it
// out. It compares addresses only; no pointer is made from them.
func (q *WriteQueue) inSpare(j int, b []byte) bool {
	it := &q.items[j]
	return it.kind == itemBytes && len(b) > 0 && cap(it.b)-len(it.b) >= len(b) &&
		&b[0] == &it.b[len(it.b):cap(it.b)][0]
}

// FillHead puts the head h (from headRoom) in the placeholder, or at the end when there is
// none. When h was built in the spare room of the buffer before the placeholder, that buffer
// takes it and the placeholder goes. Either way a body of one small buffer right behind the
// placeholder is moved in behind h, so that a small response goes out as one buffer.
func (q *WriteQueue) FillHead(pool *OutPool, h []byte) {
	i := q.headAt()
	q.size += int64(len(h))
	if i < 0 {
		q.push(pool, item{b: h})
		return
	}
	at := i // the item holding h
	if i > 0 && q.inSpare(i-1, h) {
		at = i - 1
		q.items[at].b = q.items[at].b[:len(q.items[at].b)+len(h)]
	} else {
		q.items[i] = item{b: h}
	}
	d := &q.items[at]
	keep := at + 1 // the first item after d that stays
	if at < i {
		keep = i + 1 // the placeholder goes
	}
	if i+2 == len(q.items) {
		if next := &q.items[i+1]; next.kind == itemBytes && cap(d.b)-len(d.b) >= len(next.b) {
			d.b = append(d.b, next.b...)
			pool.Put(next.b)
			keep = i + 2
		}
	}
	n := copy(q.items[at+1:], q.items[keep:])
	clear(q.items[at+1+n:])
	q.items = q.items[:at+1+n]
}

// InsertBeforeHead queues p ahead of the head placeholder (an interim 100 Continue must precede
// the final response), or at the end when there is none.
func (q *WriteQueue) InsertBeforeHead(pool *OutPool, p []byte) {
	i := q.headAt()
	if i < 0 {
		q.Write(pool, p)
		return
	}
	b := append(pool.Get(len(p)), p...)
	q.push(pool, item{})
	copy(q.items[i+1:], q.items[i:])
	q.items[i] = item{b: b}
	q.size += int64(len(p))
}

// RemoveHead takes the head placeholder out of the queue, leaving what follows it in place: an
// HTTP/2 stream's head goes out as a frame of its own.
func (q *WriteQueue) RemoveHead() {
	i := q.headAt()
	if i < 0 {
		return
	}
	copy(q.items[i:], q.items[i+1:])
	q.items[len(q.items)-1] = item{}
	q.items = q.items[:len(q.items)-1]
}

// AfterHead returns the bytes queued behind the head placeholder: the body held so far.
func (q *WriteQueue) AfterHead() int64 {
	i := q.headAt()
	if i < 0 {
		return 0
	}
	var n int64
	for _, it := range q.items[i+1:] {
		n += it.len()
	}
	return n
}

// DropAfterHead discards a body buffered behind the head placeholder (the handler's response is
// being replaced by an error).
func (q *WriteQueue) DropAfterHead(pool *OutPool) {
	i := q.headAt()
	if i < 0 {
		return
	}
	for _, it := range q.items[i+1:] {
		q.size -= it.len()
		if it.b != nil {
			pool.Put(it.b)
		}
	}
	clear(q.items[i+1:])
	q.items = q.items[:i+1]
}

// DropHead discards the head placeholder and the body behind it: the response is abandoned
// before it started, so none of it goes out.
func (q *WriteQueue) DropHead(pool *OutPool) {
	i := q.headAt()
	if i < 0 {
		return
	}
	q.DropAfterHead(pool)
	q.items[i] = item{}
	q.items = q.items[:i]
}

// DropFiles discards the file segments still queued, and everything behind them: their files
// may be closed once SendFile returns, and a descriptor number outliving its file could send
// whatever file is opened next under it.
func (q *WriteQueue) DropFiles(pool *OutPool) {
	for i := range q.items {
		if q.items[i].kind != itemFile {
			continue
		}
		for _, it := range q.items[i:] {
			q.size -= it.len()
			if it.b != nil {
				pool.Put(it.b)
			}
		}
		clear(q.items[i:])
		q.items = q.items[:i]
		return
	}
}

func (it *item) len() int64 {
	switch it.kind {
	case itemFile:
		return it.fn
	case itemBytes:
		return int64(len(it.b) - int(it.off))
	}
	return 0
}

// Compact moves what the queue holds into one buffer of its size, when that is smaller than
// the buffers holding it: for a queue that may wait long for little — a whole response on an
// HTTP/2 stream whose client keeps its window shut — so that it holds what it has to send, not
// a chunk's worth. Only small queues of bytes are moved.
func (q *WriteQueue) Compact(pool *OutPool) {
	n := int(q.size)
	if n == 0 || n > compactMax {
		return
	}
	held := 0
	for _, it := range q.items {
		if it.kind != itemBytes {
			return
		}
		held += cap(it.b)
	}
	if held <= bufpool.SizeClass(n) {
		return
	}
	b := pool.Get(n)
	for _, it := range q.items {
		b = append(b, it.b[it.off:]...)
		pool.Put(it.b)
	}
	clear(q.items)
	q.items = append(q.items[:0], item{b: b})
}

// compactMax is the most a queue holds for compact to move it.
const compactMax = 2048

// drop removes the first k items (already recycled).
func (q *WriteQueue) drop(pool *OutPool, k int) {
	switch k {
	case 0:
		return
	case len(q.items): // everything went out: the usual case
		q.empty(pool)
		return
	}
	n := copy(q.items, q.items[k:])
	clear(q.items[n:])
	q.items = q.items[:n]
}

// Release recycles every queued buffer, unsent ones included: the connection is gone. The
// buffers holding the first inFlight bytes, which a send under way is reading (AsyncWriter), are
// left to it instead: it keeps them alive until the kernel is done, and the collector frees them.
func (q *WriteQueue) Release(pool *OutPool, inFlight int) {
	for i := range q.items {
		it := &q.items[i]
		if inFlight > 0 && it.kind == itemBytes {
			inFlight -= len(it.b) - int(it.off)
			continue
		}
		if it.b != nil {
			pool.Put(it.b)
		}
	}
	q.empty(pool)
	q.size = 0
}
