package body

import (
	"errors"
	"io"
	"math"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/bufpool"
)

// Reader returns the request body of c as an io.Reader, for io.Copy, hash.Hash, decoders and
// the like. It reads with c.ReadBody, which parks the handler until bytes arrive, and costs no
// allocation. It is valid until the handler returns.
func Reader(c *core.Ctx) io.Reader { return (*ctxReader)(c) }

// ctxReader is a Ctx seen as an io.Reader. Being a pointer, it fits in an interface value
// without an allocation, which a struct wrapping the Ctx would not.
type ctxReader core.Ctx

func (r *ctxReader) Read(p []byte) (int, error) { return (*core.Ctx)(r).ReadBody(p) }

// ReadAll reads the request body (what the handler has not read yet) and returns it. max
// bounds its size in bytes (zero or negative: no bound of its own; core.Options.MaxBodyBytes
// still applies).
//
// A body over the bound fails with core.ErrBodyTooLarge. A declared Content-Length over max
// fails at once, before any body byte is read and without a 100 Continue, so the client need
// not send it. On core.ErrBodyTooLarge, ReadAll sets the response to 413 with
// Connection: close (the rest of the body is never read), unless the response has started; a
// handler that writes nothing else sends just that, and one that wants another answer sets its
// own status.
//
// The buffer grows with the bytes received, never ahead of them by the declared length, so a
// client cannot make the server reserve memory it does not send.
func ReadAll(c *core.Ctx, max int64) ([]byte, error) {
	b, _, err := readAll(c, max)
	return b, err
}

// readAll is ReadAll, and says whether a core.ErrBodyTooLarge is max's (not the server's
// bound, core.Options.MaxBodyBytes or core.Seam.LimitBody).
func readAll(c *core.Ctx, max int64) (_ []byte, overMax bool, _ error) {
	if max == math.MaxInt64 {
		max = 0 // no body is longer: no bound (and max+1 below would overflow)
	}
	declared := c.ContentLength()
	if max > 0 && declared > max {
		return nil, true, refuse(c)
	}
	if declared == 0 || c.Seam().BodyDone() {
		// Nothing to read; a body error, if any, is still reported.
		_, err := c.ReadBody(nil)
		if err == io.EOF {
			err = nil
		}
		return []byte{}, false, err
	}
	b := make([]byte, 0, firstSize(declared, max))
	for {
		if len(b) == cap(b) {
			if c.Seam().BodyDone() {
				// A body that fills the buffer exactly: its io.EOF is still to come, but the
				// buffer need not grow for it.
				return b, false, nil
			}
			b = grow(b, declared, max)
		}
		room := b[len(b):cap(b)]
		if max > 0 && int64(len(b)+len(room)) > max+1 {
			// Read at most one byte past max: enough to tell the body is over it.
			room = room[:max+1-int64(len(b))]
		}
		n, err := c.ReadBody(room)
		b = b[:len(b)+n]
		if max > 0 && int64(len(b)) > max {
			return nil, true, refuse(c)
		}
		switch {
		case err == io.EOF:
			return b, false, nil
		case errors.Is(err, core.ErrBodyTooLarge):
			return nil, false, refuse(c)
		case err != nil:
			return nil, false, err
		}
	}
}

// firstSize is ReadAll's first buffer: small, unless the body is declared smaller still.
func firstSize(declared, limit int64) int {
	n := int64(512)
	if declared > 0 {
		n = min(n, declared)
	}
	if limit > 0 {
		n = min(n, limit+1)
	}
	return int(n)
}

// grow doubles b's capacity, but not past what the declared length (or max) can still need:
// the bytes received so far justify the size, the declaration only caps it.
func grow(b []byte, declared, limit int64) []byte {
	n := int64(max(2*cap(b), 512))
	if declared > 0 {
		n = min(n, declared)
	}
	if limit > 0 {
		n = min(n, limit+1)
	}
	if n <= int64(cap(b)) {
		n = int64(cap(b)) + 512
	}
	nb := make([]byte, len(b), n)
	copy(nb, b)
	return nb
}

// refuse answers 413 and ends the connection after the response, since the body will not be
// read, unless the handler has already started its response.
func refuse(c *core.Ctx) error {
	if !c.ResponseStarted() {
		c.SetStatus(413)
		c.SetHeader("Connection", "close")
	}
	return core.ErrBodyTooLarge
}

// Discard reads the rest of the request body and drops it, returning how many bytes it read;
// the error is nil at the end of the body. The server already discards up to 256 KiB of an
// unread body by itself and closes the connection past that; Discard is for a handler that
// wants the connection kept whatever the size. It makes a client that expects 100-continue send
// its body: to refuse one, answer without reading instead.
func Discard(c *core.Ctx) (int64, error) {
	bp := bufpool.Get(discardSize)[:discardSize]
	defer bufpool.Put(bp)
	var total int64
	for {
		n, err := c.ReadBody(bp[:])
		total += int64(n)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

const discardSize = 16 << 10
