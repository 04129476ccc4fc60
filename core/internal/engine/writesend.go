package engine

import (
	"math"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// Sending a write queue's bytes: through a Sender whose writes are done when they return (the
// socket's own calls, TLS's records, an HTTP/2 stream's frames), or through one whose writes
// complete later (an io_uring poller's sends), which holds the queue's front until they do.

// A Sender carries a queue's bytes to the client: a connection's transport (the socket's own
// calls, or TLS's records, or an HTTP/2 stream's DATA frames). Its calls never block: a full
// socket is EAGAIN.
type Sender interface {
	// Writev writes the buffers of iov in order; more says more is to follow at once (a file
	// segment), so that the kernel may hold a short segment back for it.
	Writev(iov *netpoll.IOVecs, more bool) (int, netpoll.Errno)
	// Sendfile sends up to n bytes of f from *off, moving *off past what it sent.
	Sendfile(f netpoll.File, off *int64, n int) (int, netpoll.Errno)
	// Async returns, for a sender whose writes complete later, what starts them and returns
	// their results (with its descriptor); nil for a sender whose writes are done when they
	// return.
	Async() (AsyncWriter, int)
}

// An AsyncWriter sends a socket's bytes the way an io_uring poller does: a send started now
// completes later, holding the buffers it was given until then, and one is under way at most.
type AsyncWriter interface {
	// Submit starts a send of all of iov's buffers to fd; more says more follows at once.
	Submit(fd int, iov *netpoll.IOVecs, more bool) netpoll.Errno
	// Sent returns, once, what fd's last completed send sent, or its error; busy says one is
	// under way.
	Sent(fd int) (n int, err netpoll.Errno, busy bool)
}

// Send writes queued items, then p, with s until the socket is full or everything is out;
// whatever of p is left is queued. It reports whether any byte was written. iov is the loop's,
// of MaxIOVecs.
func (q *WriteQueue) Send(s Sender, iov *netpoll.IOVecs, pool *OutPool, p []byte) (progressed bool, err error) {
	pn, progressed, err := q.SendFrom(s, iov, pool, p, math.MaxInt64)
	if err == nil {
		q.Write(pool, p[pn:])
	}
	return progressed, err
}

// SendFrom writes queued items, then p, until the socket is full, everything is out, or the
// head placeholder is reached, and returns how much of p went out; the rest of p is the
// caller's to queue or to send later. Passing p here instead of queueing it first lets a large
// Write go from the handler's buffer straight to the kernel. ahead is what the queue may hold
// with p in it when the sender's writes complete later (see sendAsync): the connection's
// high-water mark, whose half wakes a writer that waits.
func (q *WriteQueue) SendFrom(s Sender, iov *netpoll.IOVecs, pool *OutPool, p []byte, ahead int64) (pn int, progressed bool, err error) {
	if a, fd := s.Async(); a != nil {
		return q.sendAsync(a, fd, s, iov, pool, p, max(ahead, asyncAhead))
	}
	for {
		iov.Reset()
		i, want := q.gather(iov, MaxIOVecs-1) // room for p
		withP := i == len(q.items) && pn < len(p)
		if withP {
			iov.Append(p[pn:])
			want += len(p) - pn
		}
		if iov.Len() == 0 {
			more, sent, err := q.sendFileFront(s, pool)
			progressed = progressed || sent
			if err != nil || !more {
				return pn, progressed, err
			}
			continue
		}
		var n int
		var e netpoll.Errno
		n, e = s.Writev(iov, !withP && i < len(q.items) && q.items[i].kind == itemFile)
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
		pn += q.Consume(pool, n)
		if n < want {
			return pn, progressed, nil
		}
	}
}

// sendAsync is SendFrom for a sender whose writes complete later (an AsyncWriter): p is queued
// first, since the kernel reads the bytes after SendFrom returns, as much of it as keeps the
// queue within ahead (the caller waits for the socket to take more, as for a full socket, and
// goes on from the rest: woken at half the high-water mark, it finds room for more); what the
// last send sent leaves the queue; and unless a send is still under way, the bytes queued up to
// the head placeholder go in the next one, the loop's iov only gathering them. The front of the
// queue is the send's until it completes: nothing but Consume and Release touches it, and
// Release leaves its buffers to the send. A file segment at the front goes out with sendfile,
// between sends.
func (q *WriteQueue) sendAsync(a AsyncWriter, fd int, s Sender, iov *netpoll.IOVecs, pool *OutPool, p []byte, ahead int64) (pn int, progressed bool, err error) {
	n, e, busy := a.Sent(fd)
	if e != 0 {
		return 0, false, netpoll.Error("send", e)
	}
	if n > 0 {
		q.Consume(pool, n)
		progressed = true
	}
	pn = int(min(int64(len(p)), max(ahead-q.size, 0)))
	q.Write(pool, p[:pn])
	for !busy {
		iov.Reset()
		if i, _ := q.gather(iov, MaxIOVecs); iov.Len() > 0 {
			e := a.Submit(fd, iov, i < len(q.items) && q.items[i].kind == itemFile)
			iov.Reset()
			if e != 0 {
				return pn, progressed, netpoll.Error("send", e)
			}
			break
		}
		more, sent, err := q.sendFileFront(s, pool)
		progressed = progressed || sent
		if err != nil {
			return pn, progressed, err
		}
		if !more {
			break
		}
	}
	return pn, progressed, nil
}

// gather appends to iov the bytes queued at the front, item by item up to the first that is not
// bytes or until iov holds limit buffers, and returns the index of the item it stopped at and
// how many bytes it gathered.
func (q *WriteQueue) gather(iov *netpoll.IOVecs, limit int) (i, n int) {
	for ; i < len(q.items) && iov.Len() < limit; i++ {
		it := &q.items[i]
		if it.kind != itemBytes {
			break
		}
		iov.Append(it.b[it.off:])
		n += len(it.b) - int(it.off)
	}
	return i, n
}

// sendFileFront sends the file segment at the front of the queue until the socket is full. more
// says it went out whole and left the queue, so that what follows may go; false too for a front
// that is no file segment (nothing, or the head placeholder). sent says some of it went out.
func (q *WriteQueue) sendFileFront(s Sender, pool *OutPool) (more, sent bool, err error) {
	if len(q.items) == 0 || q.items[0].kind != itemFile {
		return false, false, nil
	}
	done, e := q.sendFile(s, &q.items[0])
	if e != 0 {
		return false, false, netpoll.Error("sendfile", e)
	}
	if q.items[0].fn > 0 {
		return false, done > 0, nil // socket full
	}
	q.drop(pool, 1)
	return true, done > 0, nil
}

// asyncAhead is the least sendAsync lets the queue hold with a caller's buffer in it: two
// chunks, one for the send under way and one for the next.
const asyncAhead = 2 * MaxChunkSize

// Consume drops n sent bytes from the front of the queue, recycling emptied buffers, and
// returns how many of the n were beyond the queue (taken from the caller's p).
func (q *WriteQueue) Consume(pool *OutPool, n int) int {
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

// sendFile sends from a file segment until the socket is full. A file that ends early (it was
// truncated while being sent) is an error: the response can no longer match its length.
func (q *WriteQueue) sendFile(s Sender, it *item) (int64, netpoll.Errno) {
	var sent int64
	for it.fn > 0 {
		n, e := s.Sendfile(it.file, &it.foff, int(min(it.fn, 1<<30)))
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
