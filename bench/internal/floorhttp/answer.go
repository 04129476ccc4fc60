package floorhttp

import (
	"net/http"
	"strconv"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
)

// Answers holds a floor's fixed responses, their Date fields rewritten in place once a second.
// It is not safe for concurrent use: each floor has one loop.
type Answers struct {
	hello, helloClose, notFound, notFoundClose response
	sec                                        int64 // the second the Date fields show
}

// response is a complete fixed response; its Date value starts at dateAt.
type response struct {
	b      []byte
	dateAt int
}

// NewAnswers returns the responses of a floor that names itself server in its Server field.
func NewAnswers(server string) *Answers {
	a := &Answers{
		hello:         newResponse(server, "200 OK", peer.Hello, false),
		helloClose:    newResponse(server, "200 OK", peer.Hello, true),
		notFound:      newResponse(server, "404 Not Found", "not found", false),
		notFoundClose: newResponse(server, "404 Not Found", "not found", true),
	}
	a.Refresh(time.Now())
	return a
}

func newResponse(server, status, body string, close bool) response {
	head := "HTTP/1.1 " + status + "\r\nDate: "
	r := head + http.TimeFormat + "\r\nServer: " + server + "\r\nContent-Type: text/plain" +
		"\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
	if close {
		r += "Connection: close\r\n"
	}
	return response{b: []byte(r + "\r\n" + body), dateAt: len(head)}
}

// Refresh rewrites the Date fields when now is in another second than they show. A floor calls
// it once per read from a socket, or per wake-up, as nginx reads the clock per wake-up.
func (a *Answers) Refresh(now time.Time) {
	if now.Unix() == a.sec {
		return
	}
	a.sec = now.Unix()
	var buf [len(http.TimeFormat)]byte
	date := now.UTC().AppendFormat(buf[:0], http.TimeFormat)
	for _, r := range []*response{&a.hello, &a.helloClose, &a.notFound, &a.notFoundClose} {
		copy(r.b[r.dateAt:], date)
	}
}

// Answer appends to out the answers to every complete request in in, and returns how many bytes
// of in they took (an incomplete request stays for the next read) and whether the connection
// ends after out: the request asked for it, or in could not be framed (ErrorResponse).
func (a *Answers) Answer(in, out []byte) (used int, _ []byte, close bool) {
	for used < len(in) {
		req, ok, err := Parse(in[used:])
		if err != nil {
			return len(in), append(out, ErrorResponse(err)...), true
		}
		if !ok {
			break
		}
		used += req.Size
		out = append(out, a.answer(req)...)
		if req.Close {
			return len(in), out, true
		}
	}
	return used, out, false
}

func (a *Answers) answer(req Request) []byte {
	hello := req.Get && string(req.Path) == "/hello"
	switch {
	case hello && req.Close:
		return a.helloClose.b
	case hello:
		return a.hello.b
	case req.Close:
		return a.notFoundClose.b
	default:
		return a.notFound.b
	}
}

// ErrorResponse answers a request a floor cannot frame; the connection closes after it.
func ErrorResponse(err error) []byte {
	status := "400 Bad Request"
	switch err {
	case ErrHeadTooLarge:
		status = "431 Request Header Fields Too Large"
	case ErrBodyTooLarge:
		status = "413 Content Too Large"
	case ErrNotAnswerable:
		status = "501 Not Implemented"
	}
	return []byte("HTTP/1.1 " + status + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
}
