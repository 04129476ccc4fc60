package main

import (
	"strconv"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/wait"
)

// Limits of the endpoints' parameters.
const (
	maxBytes    = 100 << 20
	maxDelayMS  = 10000
	maxDripSize = 10 << 20
	maxDripMS   = 10000
	dripPieces  = 1000
)

// status answers with the status named in the path and an empty body. A 1xx is no answer
// but an interim one (a 101 would switch to a protocol the client never asked for, RFC 9110
// §15.2.2): refused.
func status(c *core.Ctx) {
	code, ok := intParam(c.Param("code"), 200, 599)
	if !ok {
		badRequest(c, "status must be a number from 200 to 599")
		return
	}
	c.SetStatus(int(code))
}

// pattern holds whole runs of the alphabet, so that any piece cut at a multiple of 26 from it
// continues the sequence 'a'+i%26.
var pattern = func() []byte {
	b := make([]byte, 26*10080) // 262080 bytes: large writes, few syscalls
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}()

// writePattern writes n bytes of the sequence, in pieces of at most len(pattern).
func writePattern(c *core.Ctx, n int64, flush bool) {
	for n > 0 {
		k := min(n, int64(len(pattern)))
		if _, err := c.Write(pattern[:k]); err != nil {
			return
		}
		if flush {
			if err := c.Flush(); err != nil {
				return
			}
		}
		n -= k
	}
}

// sendBytes answers n bytes with a Content-Length.
func sendBytes(c *core.Ctx) { answerBytes(c, false) }

// streamBytes answers the same bytes chunked.
func streamBytes(c *core.Ctx) { answerBytes(c, true) }

func answerBytes(c *core.Ctx, chunked bool) {
	n, ok := intParam(c.Param("n"), 0, maxBytes)
	if !ok {
		badRequest(c, "n must be a byte count from 0 to %d", maxBytes)
		return
	}
	c.SetHeader("Content-Type", "application/octet-stream")
	if chunked {
		c.Flush() // the head goes now: the body is chunked, whatever its size
	} else {
		c.SetHeader("Content-Length", strconv.FormatInt(n, 10))
	}
	if c.Method() == "HEAD" {
		return
	}
	writePattern(c, n, false)
}

// delay answers after the given milliseconds, in continuation style: the request waits as a
// timer and a closure, not a parked coroutine.
func delay(c *core.Ctx) {
	ms, ok := intParam(c.Param("ms"), 0, maxDelayMS)
	if !ok {
		badRequest(c, "ms must be from 0 to %d", maxDelayMS)
		return
	}
	wait.After(c, time.Duration(ms)*time.Millisecond, func(c *core.Ctx, err error) {
		if err != nil {
			return // the client left, or the server is shutting down
		}
		c.SetHeader("Content-Type", "application/json")
		c.WriteString(`{"delayed_ms": ` + strconv.FormatInt(ms, 10) + "}\n")
	})
}

// drip sends bytes=N stars spread evenly over ms=M milliseconds, in at most 1000 flushed pieces.
func drip(c *core.Ctx) {
	n, ok := queryInt(c, "bytes", 10, maxDripSize)
	if !ok {
		badRequest(c, "bytes must be from 0 to %d", maxDripSize)
		return
	}
	ms, ok := queryInt(c, "ms", 0, maxDripMS)
	if !ok {
		badRequest(c, "ms must be from 0 to %d", maxDripMS)
		return
	}
	c.SetHeader("Content-Type", "application/octet-stream")
	if err := c.Flush(); err != nil || c.Method() == "HEAD" || n == 0 {
		return
	}
	pieces := min(n, dripPieces)
	gap := time.Duration(ms) * time.Millisecond / time.Duration(pieces)
	stars := make([]byte, n/pieces+1)
	for i := range stars {
		stars[i] = '*'
	}
	for i := range pieces {
		if i > 0 && gap > 0 {
			if err := wait.Sleep(c, gap); err != nil {
				return
			}
		}
		size := n / pieces
		if i < n%pieces {
			size++ // spread the remainder over the first pieces
		}
		if _, err := c.Write(stars[:size]); err != nil {
			return
		}
		if err := c.Flush(); err != nil {
			return
		}
	}
}

// queryInt reads an integer query parameter in [lo, hi], def when absent.
func queryInt(c *core.Ctx, name string, def, hi int64) (int64, bool) {
	s, present := c.Bytes().Query(name)
	if !present {
		return def, true
	}
	return intParam(string(s), 0, hi)
}
