package nethttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path"
	"runtime"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/alias"
	"github.com/dwellhttp/dwell/internal/bufpool"
	"github.com/dwellhttp/dwell/internal/syntax"
)

// A responseWriter is the http.ResponseWriter of a net/http handler. It runs on the handler's
// goroutine and keeps the head and small writes there; the loop gets them in as few calls as
// it can: the head with the first bytes, and a whole small response with the handler's end.
type responseWriter struct {
	x       *exchange // nil once the handler has returned
	header  http.Header
	status  int   // the final status, once WriteHeader was called (or implied by a write)
	declLen int64 // the Content-Length the handler set, or -1
	written int64
	buf     []byte // written, not yet handed to the loop; from buffers
	err     error  // sticky: what made a call fail

	declared []string // the trailers the Trailer field named at WriteHeader, canonical

	headPending bool // the head is in x.call.fields, not yet handed to the loop
	sniff       bool // the Content-Type is to be sniffed from the first bytes

	// The connection was hijacked (see Hijack): the request's dwell handler has returned, and
	// the request ends with end, which the handler's return wakes.
	hijacked bool
	end      core.Waker
}

// Header returns the response's header map. Changes after WriteHeader (or the first Write)
// have no effect, as in net/http.
func (w *responseWriter) Header() http.Header {
	if w.header == nil {
		w.header = make(http.Header)
	}
	return w.header
}

// WriteHeader sends a 1xx interim response at once, or sets the final status and takes the
// header fields as they are now. A code outside 100–999 panics; a second final status is
// ignored and logged.
func (w *responseWriter) WriteHeader(code int) {
	if w.x == nil {
		return
	}
	if w.hijacked {
		logMisuse("dwell: WriteHeader on a hijacked connection from a net/http handler")
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if w.status != 0 {
		logMisuse("dwell: superfluous WriteHeader call from a net/http handler")
		return
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		w.interim(code)
		return
	}
	w.status = code
	cl := &w.x.call
	var typed bool
	cl.fields, w.declLen, typed = w.snapshot(cl.fields[:0], false)
	for _, v := range w.header["Trailer"] {
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				w.declared = append(w.declared, http.CanonicalHeaderKey(name))
			}
		}
	}
	w.headPending = true
	w.sniff = !typed && syntax.StatusAllowsBody(code)
}

// interim sends the 1xx response code with the header fields set so far (RFC 9110 §15.2).
func (w *responseWriter) interim(code int) {
	x := w.x
	cl := &x.call
	cl.kind = callInterim
	cl.status = code
	cl.fields, _, _ = w.snapshot(cl.fields[:0], true)
	x.do(false)
	clear(cl.fields)
	cl.fields, cl.status, cl.err = cl.fields[:0], 0, nil
}

// Write buffers p, or hands it to the loop with what is buffered when it does not fit: the
// handler waits there while the client is slow.
func (w *responseWriter) Write(p []byte) (int, error) {
	if w.x == nil {
		return 0, errHandlerDone
	}
	if w.hijacked {
		if len(p) > 0 {
			logMisuse("dwell: Write on a hijacked connection from a net/http handler")
		}
		return 0, http.ErrHijacked
	}
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !syntax.StatusAllowsBody(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.err != nil {
		return 0, w.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	w.written += int64(len(p))
	if w.declLen >= 0 && w.written > w.declLen {
		return 0, http.ErrContentLength
	}
	if w.buf == nil && len(p) < bufferSize {
		w.buf = bufpool.Get(bufferSize)
	}
	if len(p) <= cap(w.buf)-len(w.buf) {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	n := len(p)
	if w.headPending && w.sniff && len(w.buf) > 0 && len(w.buf) < sniffLen {
		// The type is sniffed from the buffered bytes: let them be the first sniffLen of the
		// body, as net/http's are, not a small first write alone.
		k := min(len(p), sniffLen-len(w.buf))
		w.buf, p = append(w.buf, p[:k]...), p[k:]
	}
	if err := w.handOver(callWrite, p, false); err != nil {
		return 0, err
	}
	return n, nil
}

// sniffLen is how much of a body http.DetectContentType reads.
const sniffLen = 512

// WriteString is Write for a string, without copying it to bytes first.
func (w *responseWriter) WriteString(s string) (int, error) {
	// The loop and the buffer only read p.
	return w.Write(alias.Bytes(s))
}

// Flush sends the head, if it has not gone, and everything written so far (http.Flusher).
func (w *responseWriter) Flush() { w.FlushError() }

// FlushError is Flush that reports a failure, for http.ResponseController; after Hijack it
// is http.ErrHijacked.
func (w *responseWriter) FlushError() error {
	if w.x == nil {
		return errHandlerDone
	}
	if w.hijacked {
		return http.ErrHijacked
	}
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return w.err
	}
	if w.status == http.StatusSwitchingProtocols && w.headPending {
		// net/http sends the 101's head here; core sends one only as it hands the connection
		// over, so it waits for the Hijack that follows (see Hijack).
		return nil
	}
	return w.handOver(callWrite, nil, true)
}

// EnableFullDuplex reports success, for http.ResponseController: a dwell handler may read the
// request body after its response has started.
func (w *responseWriter) EnableFullDuplex() error { return nil }

// CloseNotify is net/http's deprecated http.CloseNotifier, for the libraries that still assert
// it without checking (gin's Context.Stream): the channel receives once the request's context
// ends — the client gone, the grace period over, or the request ended — holding no goroutine
// meanwhile.
func (w *responseWriter) CloseNotify() <-chan bool {
	gone := make(chan bool, 1)
	if w.x == nil {
		gone <- true // the request has ended
		return gone
	}
	context.AfterFunc(w.x.ctx, func() { gone <- true })
	return gone
}

// handOver makes a call of kind with the buffered bytes, then p, then a flush if asked, and
// the head if it has not gone yet.
func (w *responseWriter) handOver(kind callKind, p []byte, flush bool) error {
	x := w.x
	cl := &x.call
	cl.kind = kind
	w.headInto(cl, p)
	cl.out, cl.p, cl.flush = w.buf, p, flush
	x.do(false)
	err := cl.err
	cl.out, cl.p, cl.flush, cl.err = nil, nil, false, nil
	w.nextBuffer(flush)
	if err != nil {
		w.err = writeError(err)
		return w.err
	}
	return nil
}

// nextBuffer readies the buffer after a call has taken its bytes. After a flush the buffer goes
// back to the pool: a stream that flushes each event and waits between them holds none while it
// waits. A small buffer that filled up makes way for a large one.
func (w *responseWriter) nextBuffer(flushed bool) {
	switch {
	case w.buf == nil:
	case flushed:
		bufpool.Put(w.buf)
		w.buf = nil
	case cap(w.buf) == bufferSize && len(w.buf) == cap(w.buf):
		bufpool.Put(w.buf)
		w.buf = bufpool.Get(largeBufferSize)
	default:
		w.buf = w.buf[:0]
	}
}

// headInto puts the head into the call, if it has yet to go, with a sniffed Content-Type when
// the handler set none and the call has body bytes (the buffered ones, else p).
func (w *responseWriter) headInto(cl *call, p []byte) {
	if !w.headPending {
		return
	}
	w.headPending = false
	cl.status = w.status
	if !w.sniff {
		return
	}
	data := w.buf
	if len(data) == 0 {
		data = p
	}
	if len(data) > 0 {
		cl.fields = append(cl.fields, "Content-Type", http.DetectContentType(data))
	}
}

// finish hands the end of the response to the loop — the head and the buffered bytes, or the
// handler's panic — and lets go of the exchange.
func (w *responseWriter) finish(panicV any) {
	if w.hijacked {
		w.finishHijacked(panicV)
		return
	}
	x := w.x
	cl := &x.call
	cl.kind = callFinish
	cl.panicV = panicV
	if panicV == nil {
		if w.status == 0 {
			// net/http's 200; but the Ctx keeps no status, so that the server's own answer
			// (413 for a body over the limit, 503 at a shutdown's end) stands if it has one.
			w.WriteHeader(http.StatusOK)
			cl.implied = true
		}
		w.headInto(cl, nil)
		cl.respTrailers = w.trailers(cl.respTrailers)
	} else {
		cl.status = 0
	}
	cl.out, cl.p = w.buf, nil // the loop gives the buffer back
	w.x, w.buf = nil, nil
	x.post(false)
}

// ReadFrom copies src to the response (io.Copy uses it): a regular file larger than the buffer
// goes out with sendfile, from the page cache to the socket; anything else through the buffer,
// so that a copy allocates nothing.
func (w *responseWriter) ReadFrom(src io.Reader) (int64, error) {
	if w.x == nil {
		return 0, errHandlerDone
	}
	if w.hijacked {
		return 0, http.ErrHijacked
	}
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.err == nil && syntax.StatusAllowsBody(w.status) && !(w.headPending && w.sniff) {
		if f, limit, lr := fileSource(src); f != nil {
			if n, ok, err := w.sendFile(f, limit, lr); ok {
				return n, err
			}
		}
	}
	return w.copyFrom(src)
}

// fileSource returns the file src reads, with the limit of an io.LimitedReader around it
// (-1 for none): http.ServeContent copies a file, or a range of it, that way.
func fileSource(src io.Reader) (*os.File, int64, *io.LimitedReader) {
	switch s := src.(type) {
	case *os.File:
		return s, -1, nil
	case *io.LimitedReader:
		if f, ok := s.R.(*os.File); ok {
			return f, s.N, s
		}
	}
	return nil, 0, nil
}

// sendFile sends the rest of f, up to limit bytes, with the loop's sendfile, and moves f's
// offset (and lr's count) past what went out, as a copy would. It reports false when the
// bytes are few enough for the buffer (a call would cost more than the copy), or when f is no
// regular file, for the caller to copy instead.
func (w *responseWriter) sendFile(f *os.File, limit int64, lr *io.LimitedReader) (int64, bool, error) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0, false, nil
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, false, nil
	}
	n := fi.Size() - off
	if limit >= 0 {
		n = min(n, limit)
	}
	if n <= int64(max(bufferSize, cap(w.buf))-len(w.buf)) || w.declLen >= 0 && w.written+n > w.declLen {
		return 0, false, nil
	}
	w.written += n
	x := w.x
	cl := &x.call
	cl.kind = callSendFile
	w.headInto(cl, nil)
	cl.out, cl.file, cl.off, cl.len = w.buf, f, off, n
	x.do(false)
	err = cl.err
	cl.out, cl.file, cl.err = nil, nil, nil
	w.nextBuffer(false)
	if err != nil {
		w.err = writeError(err)
		return 0, true, w.err
	}
	if _, err := f.Seek(off+n, io.SeekStart); err != nil {
		return n, true, err
	}
	if lr != nil {
		lr.N -= n
	}
	return n, true, nil
}

// copyFrom copies src through the buffer, reading straight into it: a stream goes to the loop
// one full buffer at a time.
func (w *responseWriter) copyFrom(src io.Reader) (int64, error) {
	var total int64
	for {
		if w.buf == nil {
			w.buf = bufpool.Get(bufferSize)
		}
		if len(w.buf) == cap(w.buf) {
			if err := w.handOver(callWrite, nil, false); err != nil {
				return total, err
			}
		}
		n, err := src.Read(w.buf[len(w.buf):cap(w.buf)])
		if n > 0 {
			if err := w.count(n); err != nil {
				return total, err
			}
			w.buf = w.buf[:len(w.buf)+n]
			total += int64(n)
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// count accounts for n more body bytes, as Write does before taking them.
func (w *responseWriter) count(n int) error {
	switch {
	case w.err != nil:
		return w.err
	case !syntax.StatusAllowsBody(w.status):
		return http.ErrBodyNotAllowed
	}
	w.written += int64(n)
	if w.declLen >= 0 && w.written > w.declLen {
		return http.ErrContentLength
	}
	return nil
}

// writeError returns the net/http error for what the loop reported.
func writeError(err error) error {
	switch {
	case errors.Is(err, core.ErrBodyLength):
		return http.ErrContentLength
	case errors.Is(err, core.ErrBodyNotAllowed):
		return http.ErrBodyNotAllowed
	}
	return err
}

// logMisuse logs msg — a second WriteHeader, a Write after Hijack — with the place in the
// handler's code it was called from, as net/http does.
func logMisuse(msg string) {
	var pcs [16]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
	caller := "unknown"
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "net/http.") &&
			!strings.HasPrefix(f.Function, "github.com/dwellhttp/dwell/nethttp.(*responseWriter)") {
			caller = fmt.Sprintf("%s (%s:%d)", f.Function, path.Base(f.File), f.Line)
			break
		}
		if !more {
			break
		}
	}
	slog.Warn(msg, "caller", caller)
}
