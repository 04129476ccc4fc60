// Command gnet is the floor of the dwell benchmarks' CPU figures: one gnet event loop
// (github.com/panjf2000/gnet/v2) with the least HTTP that keeps framing right on keep-alive and
// pipelined connections, answering GET /hello with a fixed response. Its cost per request is
// roughly the cost of the loop and the syscalls alone; what a server spends above it is its own.
//
// It is not an HTTP server: no file serving, no bodies, no long polls, no net/http handlers; every
// other request gets a 404, a malformed one a 400 and the connection's end.
package main

import (
	"log"
	"net/http"
	"strconv"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/panjf2000/gnet/v2"
	"github.com/panjf2000/gnet/v2/pkg/logging"
)

func main() {
	f := peer.ParseFlags()
	s := &server{booted: make(chan struct{})}
	s.hello = newResponse("200 OK", "text/plain", peer.Hello, false)
	s.helloClose = newResponse("200 OK", "text/plain", peer.Hello, true)
	s.notFound = newResponse("404 Not Found", "text/plain", "not found", false)
	s.notFoundClose = newResponse("404 Not Found", "text/plain", "not found", true)
	s.refreshDate()

	failed := make(chan error, 1)
	go func() {
		// One loop, like every peer on its one core; no ticker, the date is refreshed on traffic.
		failed <- gnet.Run(s, "tcp://"+f.Addr,
			gnet.WithMulticore(false),
			gnet.WithNumEventLoop(1),
			gnet.WithTCPNoDelay(gnet.TCPNoDelay),
			gnet.WithLogLevel(logging.ErrorLevel))
	}()
	select {
	case <-s.booted:
	case err := <-failed:
		log.Fatal(err)
	}
	peer.Ready(f.Addr)
	// Returning ends the process and with it every connection: Engine.Stop polls for the loop's
	// end every 500 ms, which would add that to every measurement's stop.
	peer.WaitForStop()
}

// server is the event handler. Its callbacks all run on the one loop goroutine, so its scratch
// buffer and date need no lock.
type server struct {
	gnet.BuiltinEventEngine
	booted chan struct{}
	// The fixed responses, their Date field rewritten in place once a second.
	hello, helloClose, notFound, notFoundClose *response
	// sec is the second the Date fields show.
	sec int64
	// out collects the answers to every complete request of one read, written with one write:
	// a pipelined batch costs one syscall.
	out []byte
}

// OnBoot runs once the listener accepts.
func (s *server) OnBoot(gnet.Engine) gnet.Action {
	close(s.booted)
	return gnet.None
}

// OnTraffic answers every complete request in the connection's input and leaves an incomplete
// one for the next read.
func (s *server) OnTraffic(c gnet.Conn) gnet.Action {
	in, _ := c.Peek(-1)
	s.refreshDate()
	out := s.out[:0]
	used := 0
	action := gnet.None
	for used < len(in) {
		req, ok, err := parseRequest(in[used:])
		if err != nil {
			out = append(out, errorResponse(err)...)
			used, action = len(in), gnet.Close
			break
		}
		if !ok {
			break
		}
		used += req.size
		out = append(out, s.answer(req)...)
		if req.close {
			used, action = len(in), gnet.Close
			break
		}
	}
	if used > 0 {
		// Discard(0) would drop the whole input.
		c.Discard(used)
	}
	if len(out) > 0 {
		// Write sends what the socket takes and queues the rest; a failed write closes the
		// connection inside gnet.
		c.Write(out)
	}
	s.out = out
	return action
}

func (s *server) answer(req request) []byte {
	hello := req.get && string(req.path) == "/hello"
	switch {
	case hello && req.close:
		return s.helloClose.b
	case hello:
		return s.hello.b
	case req.close:
		return s.notFoundClose.b
	default:
		return s.notFound.b
	}
}

// refreshDate rewrites the responses' Date fields when the second has changed. One clock read
// per read from a socket, as nginx does per wake-up.
func (s *server) refreshDate() {
	now := time.Now()
	if now.Unix() == s.sec {
		return
	}
	s.sec = now.Unix()
	var buf [len(http.TimeFormat)]byte
	date := now.UTC().AppendFormat(buf[:0], http.TimeFormat)
	for _, r := range []*response{s.hello, s.helloClose, s.notFound, s.notFoundClose} {
		copy(r.b[r.dateAt:], date)
	}
}

// response is a complete fixed response; its Date value starts at dateAt.
type response struct {
	b      []byte
	dateAt int
}

func newResponse(status, contentType, body string, close bool) *response {
	head := "HTTP/1.1 " + status + "\r\nDate: "
	r := head + http.TimeFormat + "\r\nServer: gnet\r\nContent-Type: " + contentType +
		"\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
	if close {
		r += "Connection: close\r\n"
	}
	return &response{b: []byte(r + "\r\n" + body), dateAt: len(head)}
}

// errorResponse answers a request the floor cannot frame; the connection closes after it.
func errorResponse(err error) []byte {
	status := "400 Bad Request"
	switch err {
	case errHeadTooLarge:
		status = "431 Request Header Fields Too Large"
	case errBodyTooLarge:
		status = "413 Content Too Large"
	case errNotAnswerable:
		status = "501 Not Implemented"
	}
	return []byte("HTTP/1.1 " + status + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
}
