package core

import (
	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/internal/bufpool"
)

// A writeQueue holds a connection's output in order until the socket takes it: byte chunks from
// the loop's pool and file segments that go out with sendfile. Pipelined responses gather here
// and leave together in one writev.
//
// While a handler writes a body whose head is not known yet (its length is decided when the
// handler returns), the queue holds a placeholder for that head, followed by the body: output
// before the placeholder (earlier responses) can be sent, nothing after it until the head
// fills it. So a body is buffered where it will be sent from, and never copied again.
type writeQueue struct {
	items []outItem
	size  int64 // bytes queued, file segments included
}

// An outItem is a pooled buffer whose unsent bytes are b[off:], a file segment, or the
// placeholder for a response head.
type outItem struct {
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

// An outPool is a loop's pool for its connections' output: the byte buffers, and the short
// item arrays a queue's items live in. A queue takes an array when it gets its first item and
// gives it back when it empties, so that an idle connection holds none (a WebSocket between
// messages, a keep-alive connection between requests) and a busy one allocates none.
type outPool struct {
	bufpool.Pool
	items []*[queueItems]outItem
}

// queueItems is the length of the arrays an outPool lends: enough for a response's head, body
// and a file segment, or a few pipelined responses; a queue that needs more grows its own.
const queueItems = 4

// itemArraysMax bounds the idle item arrays a loop keeps: as many as a broadcast to a few
// thousand connections in one turn takes (768 KiB of them at most).
const itemArraysMax = 4096

// push appends it to the queue, taking an item array from the pool for the first.
func (q *writeQueue) push(pool *outPool, it outItem) {
	if q.items == nil {
		if n := len(pool.items); n > 0 {
			q.items = pool.items[n-1][:0]
			pool.items[n-1] = nil
			pool.items = pool.items[:n-1]
		} else {
			q.items = new([queueItems]outItem)[:0]
		}
	}
	q.items = append(q.items, it)
}

// empty gives the emptied queue's item array back to the pool: the pool's own, that is; one
// the queue grew itself is left to the collector.
func (q *writeQueue) empty(pool *outPool) {
	clear(q.items)
	if cap(q.items) == queueItems && len(pool.items) < itemArraysMax {
		pool.items = append(pool.items, (*[queueItems]outItem)(q.items[:queueItems]))
	}
	q.items = nil
}

const (
	maxIovecs    = 64
	minChunkSize = 4 << 10
	maxChunkSize = 64 << 10
)

// write appends a copy of p.
func (q *writeQueue) write(pool *outPool, p []byte) {
	for len(p) > 0 {
		t := q.tail()
		if t == nil || cap(t.b) == len(t.b) {
			q.push(pool, outItem{b: pool.Get(min(max(len(p), minChunkSize), maxChunkSize))})
			t = &q.items[len(q.items)-1]
		}
		n := copy(t.b[len(t.b):cap(t.b)], p)
		t.b = t.b[:len(t.b)+n]
		q.size += int64(n)
		p = p[n:]
	}
}

// tail returns the last item if it is a byte item.
func (q *writeQueue) tail() *outItem {
	if len(q.items) == 0 {
		return nil
	}
	t := &q.items[len(q.items)-1]
	if t.kind != itemBytes {
		return nil
	}
	return t
}

// spare returns the free space of the tail buffer, at least n bytes, as an empty slice to
// append to; filled then accounts for what was appended. The server's refusals and a small
// file's bytes are written this way, straight into the queue (a response head goes into
// headRoom's room and fillHead).
func (q *writeQueue) spare(pool *outPool, n int) []byte {
	t := q.tail()
	if t == nil || cap(t.b)-len(t.b) < n {
		q.push(pool, outItem{b: pool.Get(min(max(n, minChunkSize), maxChunkSize))})
		t = &q.items[len(q.items)-1]
	}
	return t.b[len(t.b):len(t.b)]
}

// filled accounts for bytes appended to the slice spare returned. If the appends outgrew it
// (the estimate was short), they are copied in instead (see inSpare).
func (q *writeQueue) filled(pool *outPool, b []byte) {
	if n := len(q.items); n > 0 && q.inSpare(n-1, b) {
		t := &q.items[n-1]
		t.b = t.b[:len(t.b)+len(b)]
		q.size += int64(len(b))
		return
	}
	q.write(pool, b)
}

// appendFile queues n bytes of the file f from offset off.
func (q *writeQueue) appendFile(pool *outPool, f netpoll.File, off, n int64) {
	q.push(pool, outItem{kind: itemFile, file: f, foff: off, fn: n})
	q.size += n
}

func (q *writeQueue) hasFile() bool {
	for i := range q.items {
		if q.items[i].kind == itemFile {
			return true
		}
	}
	return false
}

// headAt returns the index of the head placeholder, or -1.
func (q *writeQueue) headAt() int {
	for i := len(q.items) - 1; i >= 0; i-- {
		if q.items[i].kind == itemHead {
			return i
		}
	}
	return -1
}

// reserveHead appends the placeholder for a response head, unless there is one.
func (q *writeQueue) reserveHead(pool *outPool) {
	if q.headAt() < 0 {
		q.push(pool, outItem{kind: itemHead})
	}
}

// headRoom returns an empty slice with room for n bytes to build a response head in: the spare
// room of the buffer queued just before the head's placeholder, when there is that much —
// pipelined responses then share one buffer, and leave as one — or else a pooled buffer, of
// at least minChunkSize when more responses are expected to follow it (more).
func (q *writeQueue) headRoom(pool *outPool, n int, more bool) []byte {
	if i := q.headAt(); i > 0 {
		if prev := &q.items[i-1]; prev.kind == itemBytes && cap(prev.b)-len(prev.b) >= n {
			return prev.b[len(prev.b):len(prev.b)]
		}
	}
	if more {
		n = max(n, minChunkSize)
	}
	return pool.Get(n)
}

// inSpare reports whether b lies in the spare room of item j's buffer, where headRoom hands it
// out. It compares addresses only; no pointer is made from them.
func (q *writeQueue) inSpare(j int, b []byte) bool {
	it := &q.items[j]
	return it.kind == itemBytes && len(b) > 0 && cap(it.b)-len(it.b) >= len(b) &&
		&b[0] == &it.b[len(it.b):cap(it.b)][0]
}

// fillHead puts the head h (from headRoom) in the placeholder, or at the end when there is
// none. When h was built in the spare room of the buffer before the placeholder, that buffer
// takes it and the placeholder goes. Either way a body of one small buffer right behind the
// placeholder is moved in behind h, so that a small response goes out as one buffer.
func (q *writeQueue) fillHead(pool *outPool, h []byte) {
	i := q.headAt()
	q.size += int64(len(h))
	if i < 0 {
		q.push(pool, outItem{b: h})
		return
	}
	at := i // the item holding h
	if i > 0 && q.inSpare(i-1, h) {
		at = i - 1
		q.items[at].b = q.items[at].b[:len(q.items[at].b)+len(h)]
	} else {
		q.items[i] = outItem{b: h}
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

// insertBeforeHead queues p ahead of the head placeholder (an interim 100 Continue must precede
// the final response), or at the end when there is none.
func (q *writeQueue) insertBeforeHead(pool *outPool, p []byte) {
	i := q.headAt()
	if i < 0 {
		q.write(pool, p)
		return
	}
	b := append(pool.Get(len(p)), p...)
	q.push(pool, outItem{})
	copy(q.items[i+1:], q.items[i:])
	q.items[i] = outItem{b: b}
	q.size += int64(len(p))
}

// removeHead takes the head placeholder out of the queue, leaving what follows it in place: an
// HTTP/2 stream's head goes out as a frame of its own.
func (q *writeQueue) removeHead() {
	i := q.headAt()
	if i < 0 {
		return
	}
	copy(q.items[i:], q.items[i+1:])
	q.items[len(q.items)-1] = outItem{}
	q.items = q.items[:len(q.items)-1]
}

// afterHead returns the bytes queued behind the head placeholder: the body held so far.
func (q *writeQueue) afterHead() int64 {
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

// dropAfterHead discards a body buffered behind the head placeholder (the handler's response is
// being replaced by an error).
func (q *writeQueue) dropAfterHead(pool *outPool) {
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

// dropHead discards the head placeholder and the body behind it: the response is abandoned
// before it started, so none of it goes out.
func (q *writeQueue) dropHead(pool *outPool) {
	i := q.headAt()
	if i < 0 {
		return
	}
	q.dropAfterHead(pool)
	q.items[i] = outItem{}
	q.items = q.items[:i]
}

// dropFiles discards the file segments still queued, and everything behind them: their files
// may be closed once SendFile returns, and a descriptor number outliving its file could send
// whatever file is opened next under it.
func (q *writeQueue) dropFiles(pool *outPool) {
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

func (it *outItem) len() int64 {
	switch it.kind {
	case itemFile:
		return it.fn
	case itemBytes:
		return int64(len(it.b) - int(it.off))
	}
	return 0
}

// send writes queued items, then p, to c's socket until the socket is full or everything is
// out; whatever of p is left is queued. It reports whether any byte was written.
func (q *writeQueue) send(c *conn, p []byte) (progressed bool, err error) {
	pn, progressed, err := q.sendFrom(c, p)
	if err == nil {
		q.write(&c.l.pool, p[pn:])
	}
	return progressed, err
}

// sendFrom writes queued items, then p, until the socket is full, everything is out, or the
// head placeholder is reached, and returns how much of p went out; the rest of p is the
// caller's to queue or to send later. Passing p here instead of queueing it first lets a large
// write go from the handler's buffer straight to the kernel.
func (q *writeQueue) sendFrom(c *conn, p []byte) (pn int, progressed bool, err error) {
	l := c.l
	iov := l.iov
	for {
		iov.Reset()
		want := 0
		i := 0
		for ; i < len(q.items) && iov.Len() < maxIovecs-1; i++ {
			it := &q.items[i]
			if it.kind != itemBytes {
				break
			}
			iov.Append(it.b[it.off:])
			want += len(it.b) - int(it.off)
		}
		withP := i == len(q.items) && pn < len(p)
		if withP {
			iov.Append(p[pn:])
			want += len(p) - pn
		}
		if iov.Len() == 0 {
			if i == len(q.items) || q.items[i].kind == itemHead {
				return pn, progressed, nil
			}
			done, e := q.sendFile(c, &q.items[i])
			if e != 0 {
				return pn, progressed, netpoll.Error("sendfile", e)
			}
			progressed = progressed || done > 0
			if q.items[i].fn > 0 {
				return pn, progressed, nil // socket full
			}
			q.drop(&l.pool, 1)
			continue
		}
		var n int
		var e netpoll.Errno
		n, e = c.tr().writev(c, iov, !withP && i < len(q.items) && q.items[i].kind == itemFile)
		iov.Reset()
		if e != 0 {
			switch e {
			case netpoll.EINTR:
				continue
			case netpoll.EAGAIN:
				return pn, progressed, nil
			}
			return pn, progressed, netpoll.Error("writev", e)
		}
		progressed = progressed || n > 0
		pn += q.consume(&l.pool, n)
		if n < want {
			return pn, progressed, nil
		}
	}
}

// consume drops n written bytes from the front of the queue, recycling emptied buffers, and
// returns how many of the n were beyond the queue (taken from the caller's p).
func (q *writeQueue) consume(pool *outPool, n int) int {
	done := 0
	for n > 0 && done < len(q.items) {
		it := &q.items[done]
		if it.kind != itemBytes {
			break
		}
		k := min(n, len(it.b)-int(it.off))
		it.off += int32(k)
		n -= k
		q.size -= int64(k)
		if int(it.off) < len(it.b) {
			break
		}
		pool.Put(it.b)
		done++
	}
	q.drop(pool, done)
	return n
}

// compact moves what the queue holds into one buffer of its size, when that is smaller than
// the buffers holding it: for a queue that may wait long for little — a whole response on an
// HTTP/2 stream whose client keeps its window shut — so that it holds what it has to send, not
// a chunk's worth. Only small queues of bytes are moved.
func (q *writeQueue) compact(pool *outPool) {
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
	q.items = append(q.items[:0], outItem{b: b})
}

// compactMax is the most a queue holds for compact to move it.
const compactMax = 2048

// drop removes the first k items (already recycled).
func (q *writeQueue) drop(pool *outPool, k int) {
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

// sendFile sends from a file segment until the socket is full. A file that ends early (it was
// truncated while being sent) is an error: the response can no longer match its length.
func (q *writeQueue) sendFile(c *conn, it *outItem) (int64, netpoll.Errno) {
	var sent int64
	for it.fn > 0 {
		n, e := c.tr().sendfile(c, it.file, &it.foff, int(min(it.fn, 1<<30)))
		if e == netpoll.EINTR {
			continue
		}
		if e == netpoll.EAGAIN {
			return sent, 0
		}
		if e != 0 {
			return sent, e
		}
		if n == 0 {
			return sent, netpoll.EIO
		}
		sent += int64(n)
		it.fn -= int64(n)
		q.size -= int64(n)
	}
	return sent, 0
}

// release recycles every queued buffer, unsent ones included: the connection is gone.
func (q *writeQueue) release(pool *outPool) {
	for i := range q.items {
		if q.items[i].b != nil {
			pool.Put(q.items[i].b)
		}
	}
	q.empty(pool)
	q.size = 0
}
