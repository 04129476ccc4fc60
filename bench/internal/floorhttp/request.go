// Package floorhttp is the least HTTP/1.1 the benchmarks' floors speak (bench/servers/gnet,
// bench/servers/uring-floor): enough to frame keep-alive and pipelined requests and answer
// GET /hello with a fixed response. It is no HTTP parser to trust on the internet.
package floorhttp

import (
	"bytes"
	"errors"
)

// A Request is what a floor needs of one request: its target, how many bytes it takes in the
// input (head and body), and whether the connection ends after the answer.
type Request struct {
	Get   bool
	Path  []byte
	Size  int
	Close bool
}

// MaxHead bounds a request head; a client that sends more without a blank line gets a 431.
const MaxHead = 8 << 10

// maxBody bounds a Content-Length body, which the floor skips: it answers no uploads.
const maxBody = 1 << 20

// The errors of Parse: each ends the connection after its answer (ErrorResponse).
var (
	ErrMalformed     = errors.New("malformed request")
	ErrHeadTooLarge  = errors.New("request head too large")
	ErrBodyTooLarge  = errors.New("request body too large")
	ErrNotAnswerable = errors.New("transfer coding not implemented")
)

// Parse reads the first request in b. It returns ok false while the request is still
// incomplete. The parse is the least that keeps framing right on a keep-alive or pipelined
// connection: the request line, Connection, Content-Length and Transfer-Encoding. It is no HTTP
// parser to trust on the internet (it checks no field syntax): it is the floor of the benchmark.
func Parse(b []byte) (req Request, ok bool, err error) {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		if len(b) > MaxHead {
			return req, false, ErrHeadTooLarge
		}
		return req, false, nil
	}
	if end+4 > MaxHead {
		return req, false, ErrHeadTooLarge
	}
	line, fields, _ := bytes.Cut(b[:end], []byte("\r\n"))
	method, rest, ok1 := bytes.Cut(line, []byte(" "))
	target, version, ok2 := bytes.Cut(rest, []byte(" "))
	if !ok1 || !ok2 || len(method) == 0 || len(target) == 0 {
		return req, false, ErrMalformed
	}
	switch string(version) {
	case "HTTP/1.1":
	case "HTTP/1.0":
		// HTTP/1.0 closes unless it asks for keep-alive; the floor does not offer it.
		req.Close = true
	default:
		return req, false, ErrMalformed
	}
	req.Get = string(method) == "GET"
	req.Path = target
	length := -1
	for len(fields) > 0 {
		var field []byte
		field, fields, _ = bytes.Cut(fields, []byte("\r\n"))
		name, value, found := bytes.Cut(field, []byte(":"))
		if !found {
			return req, false, ErrMalformed
		}
		value = bytes.Trim(value, " \t")
		switch {
		case bytes.EqualFold(name, []byte("Connection")):
			if hasToken(value, "close") {
				req.Close = true
			}
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, valid := parseLength(value)
			if !valid || (length >= 0 && n != length) {
				return req, false, ErrMalformed
			}
			length = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return req, false, ErrNotAnswerable
		}
	}
	req.Size = end + 4 + max(length, 0)
	if length > maxBody {
		return req, false, ErrBodyTooLarge
	}
	if len(b) < req.Size {
		return req, false, nil
	}
	return req, true, nil
}

// hasToken reports whether the comma-separated list v holds token, ignoring case.
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		var t []byte
		t, v, _ = bytes.Cut(v, []byte(","))
		if bytes.EqualFold(bytes.Trim(t, " \t"), []byte(token)) {
			return true
		}
	}
	return false
}

// parseLength parses a Content-Length: digits only, and small enough not to overflow.
func parseLength(v []byte) (int, bool) {
	if len(v) == 0 || len(v) > 12 {
		return 0, false
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
