package middleware

import (
	"io"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/core"
)

// A logBuffer gathers whole log lines and writes them to its writer in batches: when the batch
// reaches its size, flushEvery after the first line of a batch, and on Flush or Close. A line
// costs a copy under a lock instead of a system call, which for a log written on every request
// is most of what the line costs (nginx's access_log buffer=, flush= does the same).
//
// One lock covers the batch and the write, so that batches reach the writer whole and in the
// order their lines came; a loop whose line fills the batch writes it, as an unbuffered log
// would have written its one line.
type logBuffer struct {
	mu         sync.Mutex
	w          io.Writer
	buf        []byte
	size       int // 0: every line is written at once
	flushEvery time.Duration
	// timer is armed while the batch has lines. It is a runtime timer, not a loop's: its
	// callback runs on a goroutine of its own, off every loop, and the loops that log only
	// Reset it; the write it makes takes the lock as a loop's would.
	timer  *time.Timer
	armed  bool
	closed bool
	err    error // the first write error, for Flush and Close
}

func newLogBuffer(w io.Writer, size int, flushEvery time.Duration) *logBuffer {
	b := &logBuffer{w: w, size: size, flushEvery: flushEvery}
	if size > 0 {
		b.buf = make([]byte, 0, size)
		b.timer = time.AfterFunc(time.Hour, b.flushOnTimer)
		b.timer.Stop()
	}
	return b
}

// Write adds p, one or more whole lines, to the batch. It reports the error of the write it
// made itself, if it made one; a batch written later reports to Flush.
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.size == 0 || b.closed {
		return b.w.Write(p)
	}
	b.buf = append(b.buf, p...)
	return len(p), b.added()
}

// lineRoom is the room a line is formatted into in place (appendEntry): a batch with less left
// is written out first, a little before its size, so that a line that would not fit does not
// grow the batch's array.
const lineRoom = 1 << 10

// appendEntry formats e's access-log line straight into the batch, saving the copy Write would
// make of it. It reports false, having done nothing, when the lines are not batched, and for a
// line with an error: the error's text may come from the application's code (a panic value's
// String method), which may log, and must not run under the batch's lock.
func (b *logBuffer) appendEntry(e *logEntry, d core.Done) bool {
	if d.Err != nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.size == 0 || b.closed {
		return false
	}
	if cap(b.buf)-len(b.buf) < lineRoom && len(b.buf) > 0 {
		b.writeLocked()
	}
	b.buf = e.appendLine(b.buf, &e.direct.stamps, d)
	b.added()
	return true
}

// added writes the batch out if lines just added filled it, and otherwise makes sure the timer
// will.
func (b *logBuffer) added() error {
	if len(b.buf) >= b.size {
		return b.writeLocked()
	}
	if !b.armed {
		b.armed = true
		b.timer.Reset(b.flushEvery)
	}
	return nil
}

// writeLocked writes the batch out and empties it.
func (b *logBuffer) writeLocked() error {
	if b.armed {
		b.armed = false
		b.timer.Stop()
	}
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.w.Write(b.buf)
	if err != nil && b.err == nil {
		b.err = err
	}
	if cap(b.buf) > 4*b.size { // a line far longer than the batch: do not keep its array
		b.buf = make([]byte, 0, b.size)
	} else {
		b.buf = b.buf[:0]
	}
	return err
}

func (b *logBuffer) flushOnTimer() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.armed { // not already written by a full batch or a Flush since the timer fired
		b.writeLocked()
	}
}

// Flush writes the lines held, and returns the first error any write of a batch met.
func (b *logBuffer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writeLocked()
	return b.err
}

// Close flushes; lines that come after it are written at once.
func (b *logBuffer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writeLocked()
	b.closed = true
	return b.err
}
