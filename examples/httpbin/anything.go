package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/dwellhttp/dwell/core"
)

// echo is the JSON form of a request, fields in this order.
type echo struct {
	Method     string      `json:"method"`
	Target     string      `json:"target"`
	Path       string      `json:"path"`
	Query      string      `json:"query"`
	Proto      string      `json:"proto"`
	Headers    [][2]string `json:"headers"`
	BodyLength int64       `json:"body_length"`
	BodySHA256 string      `json:"body_sha256"`
	Trailers   [][2]string `json:"trailers"`
}

// readBufs holds the buffers bodies are read into: large, for fewer syscalls and parks on big
// uploads, and shared, since most requests have no body.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 128<<10); return &b }}

// anything echoes the request. The body is hashed as it arrives, never held whole.
func anything(c *core.Ctx) {
	e := echo{
		Method:   c.Method(),
		Target:   c.Target(),
		Path:     c.Path(),
		Query:    c.RawQuery(),
		Proto:    c.Proto(),
		Headers:  [][2]string{},
		Trailers: [][2]string{},
	}
	for name, value := range c.Headers() {
		e.Headers = append(e.Headers, [2]string{strings.ToLower(name), value})
	}
	h := sha256.New()
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	buf := *bp
	for {
		n, err := c.ReadBody(buf)
		h.Write(buf[:n])
		e.BodyLength += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			bodyFailed(c, err)
			return
		}
	}
	e.BodySHA256 = hex.EncodeToString(h.Sum(nil))
	for name, value := range c.Trailers() {
		e.Trailers = append(e.Trailers, [2]string{strings.ToLower(name), value})
	}
	out, _ := json.Marshal(e)
	c.SetHeader("Content-Type", "application/json")
	c.Write(append(out, '\n'))
}

// bodyFailed answers a body that could not be read: 413 past -max-body, 400 for a malformed
// one; a client that left or timed out gets nothing (core answers a timeout with 408 itself).
func bodyFailed(c *core.Ctx, err error) {
	switch {
	case errors.Is(err, core.ErrBodyTooLarge):
		c.SetStatus(413)
		c.SetHeader("Connection", "close")
		c.WriteString("413 content too large\n")
	case errors.Is(err, core.ErrClosed), errors.Is(err, core.ErrShutdown), errors.Is(err, core.ErrTimeout),
		errors.Is(err, io.ErrUnexpectedEOF):
	default:
		c.SetStatus(400)
		c.SetHeader("Connection", "close")
		c.WriteString("400 bad request: " + err.Error() + "\n")
	}
}
