package core

import (
	"errors"
	"strconv"
	"unsafe"
)

// A hdr is a response header field set by the handler.
type hdr struct{ name, value string }

type respFlags uint16

const (
	rfCommitted      respFlags = 1 << iota // the head is queued; the status and fields are final
	rfChunked                              // the body goes out chunked
	rfCloseDelimited                       // the body ends when the connection closes (HTTP/1.0)
	rfHasDate                              // the handler set Date
	rfHasType                              // the handler set Content-Type
	rfClose                                // the connection closes after this response
	rfHead                                 // the request is a HEAD: no body goes out
	rfHTTP11                               // the request is HTTP/1.1 (kept past the request head)
)

// ErrBodyNotAllowed is returned by Write for a response that cannot have a body (1xx, 204, 304).
// Writes to a HEAD response are counted, for its Content-Length, and not sent.
var ErrBodyNotAllowed = errors.New("dwell: response status does not allow a body")

// SetStatus sets the response status code, 200 by default. It has no effect once the response
// has started (after Flush, or once written bytes passed the high-water mark). A code outside
// 100–999 is a programming error and panics, as in net/http.
func (cx *Ctx) SetStatus(code int) {
	if code < 100 || code > 999 {
		panic("dwell: invalid status code " + strconv.Itoa(code))
	}
	if cx.rflags&rfCommitted == 0 {
		cx.status = uint16(code)
	}
}

// Status returns the status set so far (200 when none was).
func (cx *Ctx) Status() int {
	if cx.status == 0 {
		return 200
	}
	return int(cx.status)
}

// Started reports whether the response head has been committed: after that, the status and
// header fields can no longer change.
func (cx *Ctx) Started() bool { return cx.rflags&rfCommitted != 0 }

// SetHeader sets a response header field, replacing any of the same name. Date and
// Content-Type set here replace the server's; Content-Length declares the body's length (the
// body then streams without buffering); Connection: close ends the connection after the
// response; Transfer-Encoding and other Connection values are the server's to set and are
// ignored. An invalid name, or a value with CR, LF or another control byte, would let a client
// value split the response: that is a programming error and panics.
func (cx *Ctx) SetHeader(name, value string) {
	cx.DelHeader(name)
	cx.AddHeader(name, value)
}

// AddHeader adds a response header field, keeping any of the same name (as for Set-Cookie). See
// SetHeader for the special fields and validation.
func (cx *Ctx) AddHeader(name, value string) {
	if cx.rflags&rfCommitted != 0 {
		return
	}
	checkField(name, value)
	switch {
	case equalFoldString(name, "Content-Length"):
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 0 || value[0] == '+' {
			panic("dwell: invalid Content-Length " + strconv.Quote(value))
		}
		cx.declLen = n
		return
	case equalFoldString(name, "Transfer-Encoding"):
		return
	case equalFoldString(name, "Connection"):
		if equalFoldString(value, "close") {
			cx.rflags |= rfClose
		}
		return
	case equalFoldString(name, "Date"):
		cx.rflags |= rfHasDate
	case equalFoldString(name, "Content-Type"):
		cx.rflags |= rfHasType
	}
	x := cx.extra()
	x.hdrs = append(x.hdrs, hdr{name, value})
}

// headers returns the response fields set so far.
func (cx *Ctx) headers() []hdr {
	if cx.x == nil {
		return nil
	}
	return cx.x.hdrs
}

func (cx *Ctx) clearHeaders() {
	if x := cx.x; x != nil {
		clear(x.hdrs)
		x.hdrs = x.hdrs[:0]
	}
}

// DelHeader removes the response header fields named name.
func (cx *Ctx) DelHeader(name string) {
	if cx.rflags&rfCommitted != 0 {
		return
	}
	switch {
	case equalFoldString(name, "Content-Length"):
		cx.declLen = -1
	case equalFoldString(name, "Date"):
		cx.rflags &^= rfHasDate
	case equalFoldString(name, "Content-Type"):
		cx.rflags &^= rfHasType
	}
	x := cx.x
	if x == nil {
		return
	}
	k := 0
	for _, h := range x.hdrs {
		if !equalFoldString(h.name, name) {
			x.hdrs[k] = h
			k++
		}
	}
	clear(x.hdrs[k:])
	x.hdrs = x.hdrs[:k]
}

// ResponseHeader returns the value of the first response field named name set so far.
func (cx *Ctx) ResponseHeader(name string) string {
	if equalFoldString(name, "Content-Length") && cx.declLen >= 0 {
		return strconv.FormatInt(cx.declLen, 10)
	}
	for _, h := range cx.headers() {
		if equalFoldString(h.name, name) {
			return h.value
		}
	}
	return ""
}

func checkField(name, value string) {
	if name == "" {
		panic("dwell: empty header field name")
	}
	for i := 0; i < len(name); i++ {
		if !isTchar[name[i]] {
			panic("dwell: invalid header field name " + strconv.Quote(name))
		}
	}
	for i := 0; i < len(value); i++ {
		if !isValueByte[value[i]] {
			panic("dwell: invalid byte in the value of header field " + name + ": " + strconv.Quote(value))
		}
	}
}

// WriteString is Write for a string, without a copy.
func (cx *Ctx) WriteString(s string) (int, error) {
	return cx.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// Write appends p to the response body. The body is held until the handler returns, so that it
// goes out with a Content-Length; once it passes WriteHighWater (or after Flush, or when the
// handler declared a Content-Length) the head is sent and the body streams — chunked for
// HTTP/1.1 without a declared length. While more than WriteHighWater bytes wait for a slow
// client the handler parks, and resumes when the client has taken half. A client that is gone
// makes Write return ErrClosed at once.
//
// In a continuation (after Detach) Write cannot park: past the high-water mark bytes are
// queued, so a continuation that writes a lot should write in steps (wait.After).
func (cx *Ctx) Write(p []byte) (int, error) {
	if err := cx.writeErr(); err != nil {
		return 0, err
	}
	var err error
	if cx.declLen >= 0 && cx.written+int64(len(p)) > cx.declLen {
		p = p[:cx.declLen-cx.written]
		err = ErrBodyLength
	}
	cx.written += int64(len(p))
	if cx.noBody() {
		if cx.rflags&rfHead != 0 {
			return len(p), err
		}
		return 0, ErrBodyNotAllowed
	}
	c := cx.conn
	if cx.rflags&rfCommitted == 0 {
		if cx.declLen < 0 && cx.written <= int64(c.l.opts.WriteHighWater) {
			// Held behind a placeholder for the head, which is written when the length is known.
			c.out.reserveHead()
			c.out.write(&c.l.pool, p)
			return len(p), err
		}
		cx.commit(false)
	}
	// p goes to the socket from the handler's own memory: while the socket is full the handler
	// parks on p (see send), so even a single large Write holds no more than the high-water
	// mark of the server's memory, and the kernel gets large writes.
	if err := cx.stream(p); err != nil {
		return 0, err
	}
	return len(p), err
}

// stream sends p as part of a committed body, framing it as a chunk if the body is chunked.
func (cx *Ctx) stream(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	c := cx.conn
	pool := &c.l.pool
	if cx.rflags&rfChunked != 0 {
		var hex [18]byte
		c.out.write(pool, appendChunkSize(hex[:0], int64(len(p))))
		if err := cx.send(p); err != nil {
			return err
		}
		c.out.write(pool, crlf)
		return nil
	}
	return cx.send(p)
}

var crlf = []byte("\r\n")

// flushThreshold: committed output is written once this much is queued; smaller pieces wait for
// more, or for the end of the turn, so that many small writes cost few syscalls.
const flushThreshold = 16 << 10

// send queues p and writes when enough is queued, then parks the handler while the queue is over
// the high-water mark.
func (cx *Ctx) send(p []byte) error {
	c := cx.conn
	if len(p) < minChunkSize && c.out.size+int64(len(p)) < flushThreshold {
		c.out.write(&c.l.pool, p)
		return cx.waitDrain(false)
	}
	for {
		pn, progressed, err := c.out.sendFrom(c, p)
		if err != nil {
			c.close(ErrClosed)
			return ErrClosed
		}
		p = p[pn:]
		c.afterSend(progressed)
		if len(p) == 0 {
			return cx.waitDrain(false)
		}
		if c.l.current != cx || len(p) < minChunkSize {
			c.out.write(&c.l.pool, p) // a continuation cannot park; a small rest is not worth it
			c.updateInterest()
			return cx.waitDrain(false)
		}
		// The socket is full. Rather than copy the rest of p into the queue, park until the
		// socket takes more and go on from p itself, which stays the handler's until Write
		// returns: one copy (into the kernel) instead of two. The write timeout watches the
		// wait as it watches queued output.
		c.setInterest(c.events | evWrite)
		if c.wdl == 0 && c.l.opts.WriteTimeout > 0 {
			c.wdl = c.l.now + int64(c.l.opts.WriteTimeout)
			c.armTimer(c.wdl)
		}
		if err := cx.suspend(parkWrite); err != nil {
			return err
		}
		if err := cx.writeErr(); err != nil {
			return err
		}
	}
}

// waitDrain parks a handler while its connection's queue is over the high-water mark (or, with
// all, until it is empty).
func (cx *Ctx) waitDrain(all bool) error {
	c := cx.conn
	hw := int64(c.l.opts.WriteHighWater)
	for c.state != stClosed && (c.out.size > hw || all && c.out.size > 0) {
		if c.l.current != cx {
			return nil // a continuation cannot park; the queue absorbs it
		}
		if err := cx.suspend(parkWrite); err != nil {
			return err
		}
	}
	return cx.writeErr()
}

// Flush sends the response head, if it has not gone yet, and everything written so far, without
// waiting for the client to take it. After Flush the body streams (see Write).
func (cx *Ctx) Flush() error {
	if err := cx.writeErr(); err != nil {
		return err
	}
	if cx.rflags&rfCommitted == 0 {
		cx.commit(false)
	}
	c := cx.conn
	progressed, err := c.out.send(c, nil)
	if err != nil {
		c.close(ErrClosed)
		return ErrClosed
	}
	c.afterSend(progressed)
	return cx.waitDrain(false)
}

// writeErr reports why the response can no longer be written.
func (cx *Ctx) writeErr() error {
	if cx.state == ctxIdle || cx.conn == nil {
		return errRequestDone
	}
	if cx.conn.state == stClosed {
		if cx.gone != 0 {
			return cx.gone.err()
		}
		return ErrClosed
	}
	return nil
}

var errRequestDone = errors.New("dwell: Ctx used after its request ended")

// noBody reports whether the response must not carry a body: a HEAD request (RFC 9110 §9.3.2) or
// a 1xx, 204 or 304 status (RFC 9110 §6.4.1).
func (cx *Ctx) noBody() bool {
	s := cx.status
	return s != 0 && (s < 200 || s == 204 || s == 304) || cx.rflags&rfHead != 0
}
