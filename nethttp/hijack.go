package nethttp

import (
	"bufio"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/bufpool"
	"github.com/dwellhttp/dwell/internal/syntax"
)

// Hijack, as net/http has it: the handler takes the connection over, and what follows HTTP on it
// — a WebSocket, a tunnel — is the handler's own. Here the connection stays on its loop, handed
// over to goroutines (core.Ctx.HandOverConn), and the handler gets the net.Conn whose reads and
// writes the loop serves.
//
// The hijack is a call from the handler's goroutine, like a write: on the loop, the dwell
// handler applies what the net/http handler set. With no status set, the connection is handed
// over raw, with nothing sent (gorilla/websocket then writes its own 101); after WriteHeader(101)
// (coder/websocket's way), the 101 goes out first, with the header fields. After WriteHeader
// with another status, net/http writes the head as it would for a body of unknown length
// (chunked on HTTP/1.1) and hijacks: the bridge writes the same head onto the raw connection.
// Then the dwell handler detaches (core.Ctx.Detach) and returns: its request, whose context is
// the net/http handler's r.Context(), lives on without a coroutine until the net/http handler
// returns, as in net/http, or until the connection closes. The exchange is not recycled then:
// the goroutine keeps it until it returns, and the loop is done with it.
//
// From the hijack on, the handler's goroutine holds no place in the pool (workers.Pool.Leave):
// what it does with the connection — typically read it for as long as it lives — is like the
// work of a goroutine it started, and thousands of idle WebSockets must not keep the bridge's
// other routes waiting. It takes a place again to return, so that the pool's count stays true.

var (
	errHijackStarted = errors.New("dwell: Hijack after part of the response went to the client (a Flush or a large Write): the connection stays HTTP's")
	errHijackBody    = errors.New("dwell: Hijack before the request body was read to its end: read r.Body to io.EOF first")
)

// Hijack implements http.Hijacker (and so http.ResponseController's Hijack): see Handler.
func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	x := w.x
	switch {
	case x == nil:
		return nil, nil, errHandlerDone
	case w.hijacked:
		return nil, nil, http.ErrHijacked
	case x.proto == "HTTP/2.0":
		return nil, nil, http.ErrNotSupported // the connection carries other streams, as in net/http
	case w.status != 0 && !w.headPending:
		return nil, nil, errHijackStarted
	}
	cl := &x.call
	cl.kind = callHijack
	cl.status = w.status
	if w.status != 0 && w.status != http.StatusSwitchingProtocols {
		cl.out = w.hijackHead(cl.fields)
	}
	x.do(false)
	err, conn, end := cl.err, cl.conn, cl.waker
	cl.status, cl.out, cl.err, cl.conn = 0, nil, nil, nil
	if err != nil {
		return nil, nil, err // the head is still pending: the response goes on as HTTP
	}
	w.hijacked, w.end, w.headPending = true, end, false
	if w.buf != nil {
		bufpool.Put(w.buf) // written, never sent: net/http drops them too
		w.buf = nil
	}
	x.mu.Lock()
	x.gone = http.ErrHijacked // a later r.Body.Read fails, without a call
	x.mu.Unlock()
	x.pool.Leave()
	return conn, bufio.NewReadWriter(bufio.NewReaderSize(conn, bufferSize), bufio.NewWriterSize(conn, bufferSize)), nil
}

// hijackHead returns the head net/http sends when a handler that set a final status other than
// 101 hijacks the connection: the status line, the header fields as they were at WriteHeader,
// Date, and Transfer-Encoding: chunked where net/http would have chunked a body of unknown length
// (a status that allows one, no Content-Length, not a HEAD, HTTP/1.1) — what follows is the
// handler's to write. The Connection field net/http sets or drops for a client that asked to
// close the connection, or spoke HTTP/1.0, is left as the handler set it.
func (w *responseWriter) hijackHead(fields []string) []byte {
	x := w.x
	b := make([]byte, 0, 128)
	if x.proto == "HTTP/1.0" {
		b = append(b, "HTTP/1.0 "...)
	} else {
		b = append(b, "HTTP/1.1 "...)
	}
	b = strconv.AppendInt(b, int64(w.status), 10)
	if text := http.StatusText(w.status); text != "" {
		b = append(b, ' ')
		b = append(b, text...)
	} else {
		b = append(b, " status code "...)
		b = strconv.AppendInt(b, int64(w.status), 10)
	}
	b = append(b, "\r\n"...)
	dated := false
	for i := 0; i < len(fields); i += 2 {
		dated = dated || strings.EqualFold(fields[i], "Date")
		b = append(b, fields[i]...)
		b = append(b, ": "...)
		b = append(b, fields[i+1]...)
		b = append(b, "\r\n"...)
	}
	if !dated {
		b = append(b, "Date: "...)
		b = time.Now().UTC().AppendFormat(b, http.TimeFormat)
		b = append(b, "\r\n"...)
	}
	if x.method != http.MethodHead && syntax.StatusAllowsBody(w.status) && w.declLen < 0 && x.proto != "HTTP/1.0" {
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	}
	return append(b, "\r\n"...)
}

// hijack serves a callHijack on the loop: it hands the connection over — after the 101, with
// the net/http handler's fields, when the call has that status; then writing the head the call
// carries, if any — and detaches the request, with the Waker that ends it in the call. It
// reports false, with the call's error, when the connection cannot be handed over: the request
// then goes on as HTTP, unchanged.
func (x *exchange) hijack(c *core.Ctx, cl *call) bool {
	switch {
	case !c.Seam().BodyDone():
		// net/http hands the unread rest of the body to the hijacker as raw bytes; core hands
		// over only a connection whose request is over.
		cl.err = errHijackBody
		return false
	case c.ResponseStarted():
		cl.err = errHijackStarted
		return false
	}
	if cl.status == http.StatusSwitchingProtocols {
		applyHead(c, cl.status, cl.fields, false)
	}
	conn, err := c.HandOverConn()
	if err != nil {
		cl.err = err
		return false
	}
	if len(cl.out) > 0 {
		conn.Write(cl.out) // on the loop, with nothing in flight: it does not wait
	}
	// The request's deadline, if a middleware set one, was the HTTP exchange's: what follows
	// is the connection's, as it is after a native hand-over, whose handler returns.
	c.SetTimeout(0)
	cl.conn, cl.waker = conn, c.Waker()
	c.Detach(0, endHijacked)
	return true
}

// endHijacked is a hijacked request's continuation: it runs when the net/http handler returns
// (finishHijacked wakes it), or when the connection closes first (the client leaving, the
// handler's Close, a shutdown's grace period ending), and has nothing left to do: the request
// ends as it returns, and its context is cancelled.
func endHijacked(*core.Ctx, error) {}

// finishHijacked ends a hijacked handler: its request ends (on the loop), a panic is logged as
// net/http logs one (after a hijack there is no response left to cut), and the goroutine takes
// its place in the pool again before the pool gives it other work. The connection is the
// handler's code's: it stays open until closed, or until the net.Conn is collected unclosed.
func (w *responseWriter) finishHijacked(panicV any) {
	x := w.x
	w.x = nil
	if panicV != nil && panicV != core.ErrAbortHandler {
		slog.Error("dwell: panic in a net/http handler after Hijack", "panic", panicV)
	}
	w.end.Wake(nil) // false once the loop has stopped: the request ended with it
	x.pool.Rejoin(x.done)
}
