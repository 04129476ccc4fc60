package main

import (
	"bytes"
	"errors"
)

// request is what the floor needs of one request: its target, how many bytes it takes in the
// input (head and body), and whether the connection ends after the answer.
type request struct {
	get   bool
	path  []byte
	size  int
	close bool
}

// maxHead bounds a request head; a client that sends more without a blank line gets a 431.
const maxHead = 8 << 10

// maxBody bounds a Content-Length body, which the floor skips: it answers no uploads.
const maxBody = 1 << 20

var (
	errMalformed     = errors.New("malformed request")
	errHeadTooLarge  = errors.New("request head too large")
	errBodyTooLarge  = errors.New("request body too large")
	errNotAnswerable = errors.New("transfer coding not implemented")
)

// parseRequest reads the first request in b. It returns ok false while the request is still
// incomplete. The parse is the least that keeps framing right on a keep-alive or pipelined
// connection: the request line, Connection, Content-Length and Transfer-Encoding. It is no HTTP
// parser to trust on the internet (it checks no field syntax): it is the floor of the benchmark.
func parseRequest(b []byte) (req request, ok bool, err error) {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		if len(b) > maxHead {
			return req, false, errHeadTooLarge
		}
		return req, false, nil
	}
	if end+4 > maxHead {
		return req, false, errHeadTooLarge
	}
	line, fields, _ := bytes.Cut(b[:end], []byte("\r\n"))
	method, rest, ok1 := bytes.Cut(line, []byte(" "))
	target, version, ok2 := bytes.Cut(rest, []byte(" "))
	if !ok1 || !ok2 || len(method) == 0 || len(target) == 0 {
		return req, false, errMalformed
	}
	switch string(version) {
	case "HTTP/1.1":
	case "HTTP/1.0":
		// HTTP/1.0 closes unless it asks for keep-alive; the floor does not offer it.
		req.close = true
	default:
		return req, false, errMalformed
	}
	req.get = string(method) == "GET"
	req.path = target
	length := -1
	for len(fields) > 0 {
		var field []byte
		field, fields, _ = bytes.Cut(fields, []byte("\r\n"))
		name, value, found := bytes.Cut(field, []byte(":"))
		if !found {
			return req, false, errMalformed
		}
		value = bytes.Trim(value, " \t")
		switch {
		case bytes.EqualFold(name, []byte("Connection")):
			if hasToken(value, "close") {
				req.close = true
			}
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, valid := parseLength(value)
			if !valid || (length >= 0 && n != length) {
				return req, false, errMalformed
			}
			length = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return req, false, errNotAnswerable
		}
	}
	req.size = end + 4 + max(length, 0)
	if length > maxBody {
		return req, false, errBodyTooLarge
	}
	if len(b) < req.size {
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
