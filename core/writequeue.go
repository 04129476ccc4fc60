package core

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// A writeQueue holds output in order until the socket takes it: byte chunks from the loop's pool
// and file segments that go out with sendfile. A connection's responses (and a handler's body
// before its head is known) wait here; pipelined responses leave together in one writev.
type writeQueue struct {
	items []outItem // items[head:] are unsent
	head  int
	size  int64 // unsent bytes, file segments included
}

// An outItem is a pooled buffer whose unsent bytes are b[off:], or a file segment.
type outItem struct {
	b    []byte
	off  int
	file int32 // descriptor of a file segment; 0 for a byte item
	foff int64 // file segment: next offset
	fn   int64 // file segment: bytes left
}

const (
	maxIovecs    = 64
	minChunkSize = 4 << 10
	maxChunkSize = 64 << 10
	// copyLimit: items up to this size are copied when moved between queues, so that small
	// responses coalesce into one buffer and one iovec.
	copyLimit = 4 << 10
)

// write appends a copy of p.
func (q *writeQueue) write(pool *bufPool, p []byte) {
	for len(p) > 0 {
		t := q.tail()
		if t == nil || cap(t.b) == len(t.b) {
			q.items = append(q.items, outItem{b: pool.get(min(max(len(p), minChunkSize), maxChunkSize))})
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
	if len(q.items) == q.head {
		return nil
	}
	t := &q.items[len(q.items)-1]
	if t.file != 0 {
		return nil
	}
	return t
}

// spare returns the free space of the tail buffer, at least n bytes, as an empty slice to
// append to; commit then accounts for what was appended. The head of a response is formatted
// this way, straight into the queue.
func (q *writeQueue) spare(pool *bufPool, n int) []byte {
	t := q.tail()
	if t == nil || cap(t.b)-len(t.b) < n {
		q.items = append(q.items, outItem{b: pool.get(min(max(n, minChunkSize), maxChunkSize))})
		t = &q.items[len(q.items)-1]
	}
	return t.b[len(t.b):len(t.b)]
}

// commit accounts for bytes appended to the slice spare returned. If the appends outgrew it
// (the estimate was short), they are copied in instead.
func (q *writeQueue) commit(pool *bufPool, b []byte) {
	t := q.tail()
	if len(b) > 0 && t != nil && cap(t.b)-len(t.b) >= len(b) && unsafe.SliceData(b) == unsafe.SliceData(t.b[len(t.b):cap(t.b)]) {
		t.b = t.b[:len(t.b)+len(b)]
		q.size += int64(len(b))
		return
	}
	q.write(pool, b)
}

// moveFrom appends src's items to q and empties src: small items are copied into q's tail so
// that one response is one iovec, large ones change hands without a copy.
func (q *writeQueue) moveFrom(pool *bufPool, src *writeQueue) {
	for i := src.head; i < len(src.items); i++ {
		it := src.items[i]
		if it.file == 0 && len(it.b)-it.off <= copyLimit {
			if t := q.tail(); t != nil && cap(t.b)-len(t.b) >= len(it.b)-it.off {
				q.write(pool, it.b[it.off:])
				pool.put(it.b)
				continue
			}
		}
		q.items = append(q.items, it)
		q.size += it.len()
	}
	clear(src.items)
	src.items = src.items[:0]
	src.head = 0
	src.size = 0
}

// appendFile queues n bytes of the file fd from offset off.
func (q *writeQueue) appendFile(fd int, off, n int64) {
	q.items = append(q.items, outItem{file: int32(fd), foff: off, fn: n})
	q.size += n
}

func (q *writeQueue) hasFile() bool {
	for i := q.head; i < len(q.items); i++ {
		if q.items[i].file != 0 {
			return true
		}
	}
	return false
}

func (it *outItem) len() int64 {
	if it.file != 0 {
		return it.fn
	}
	return int64(len(it.b) - it.off)
}

// send writes queued items, then p, to c's socket until the socket is full or everything is
// out; whatever of p is left is queued. It reports whether any byte was written. Passing p here
// instead of queueing it first lets a large write go from the handler's buffer straight to the
// kernel.
func (q *writeQueue) send(c *conn, p []byte) (progressed bool, err error) {
	l := c.l
	fd := int(c.fd)
	for {
		iov := l.iov[:0]
		want := 0
		i := q.head
		for ; i < len(q.items) && len(iov) < maxIovecs-1; i++ {
			it := &q.items[i]
			if it.file != 0 {
				break
			}
			iov = appendIovec(iov, it.b[it.off:])
			want += len(it.b) - it.off
		}
		withP := i == len(q.items) && len(p) > 0
		if withP {
			iov = appendIovec(iov, p)
			want += len(p)
		}
		if len(iov) == 0 {
			if i == len(q.items) {
				return progressed, nil
			}
			done, e := q.sendFile(fd, &q.items[i])
			if e != 0 {
				return progressed, errnoErr("sendfile", e)
			}
			progressed = progressed || done > 0
			if q.items[i].fn > 0 {
				q.write(&l.pool, p)
				return progressed, nil // socket full
			}
			q.head++
			if q.head == len(q.items) {
				q.items = q.items[:0]
				q.head = 0
			}
			continue
		}
		var n int
		var e unix.Errno
		if len(iov) == 1 {
			n, e = sysWrite(fd, unsafe.Slice(iov[0].Base, iov[0].Len))
		} else {
			n, e = sysWritev(fd, iov)
		}
		clear(iov)
		if e != 0 {
			switch e {
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				q.write(&l.pool, p)
				return progressed, nil
			}
			return progressed, errnoErr("writev", e)
		}
		progressed = progressed || n > 0
		rest := q.consume(&l.pool, n)
		if withP {
			p = p[rest:]
		}
		if n < want {
			q.write(&l.pool, p)
			return progressed, nil
		}
		if withP {
			p = nil
		}
	}
}

// consume drops n written bytes from the front of the queue, recycling emptied buffers, and
// returns how many of the n were beyond the queue (taken from the caller's p).
func (q *writeQueue) consume(pool *bufPool, n int) int {
	for n > 0 && q.head < len(q.items) {
		it := &q.items[q.head]
		if it.file != 0 {
			break
		}
		k := min(n, len(it.b)-it.off)
		it.off += k
		n -= k
		q.size -= int64(k)
		if it.off == len(it.b) {
			pool.put(it.b)
			*it = outItem{}
			q.head++
		}
	}
	if q.head == len(q.items) {
		q.items = q.items[:0]
		q.head = 0
	}
	return n
}

// sendFile sends from a file segment until the socket is full. A file that ends early (it was
// truncated while being sent) is an error: the response can no longer match its length.
func (q *writeQueue) sendFile(sock int, it *outItem) (int64, unix.Errno) {
	var sent int64
	for it.fn > 0 {
		n, e := sysSendfile(sock, int(it.file), &it.foff, int(min(it.fn, 1<<30)))
		if e == unix.EINTR {
			continue
		}
		if e == unix.EAGAIN {
			return sent, 0
		}
		if e != 0 {
			return sent, e
		}
		if n == 0 {
			return sent, unix.EIO
		}
		sent += int64(n)
		it.fn -= int64(n)
		q.size -= int64(n)
	}
	*it = outItem{}
	return sent, 0
}

// release recycles every queued buffer, unsent ones included: the connection is gone.
func (q *writeQueue) release(pool *bufPool) {
	for i := q.head; i < len(q.items); i++ {
		if q.items[i].b != nil {
			pool.put(q.items[i].b)
		}
	}
	clear(q.items)
	q.items = q.items[:0]
	q.head = 0
	q.size = 0
}

func appendIovec(iov []unix.Iovec, b []byte) []unix.Iovec {
	v := unix.Iovec{Base: unsafe.SliceData(b)}
	v.SetLen(len(b))
	return append(iov, v)
}
