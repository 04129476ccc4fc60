package body

import (
	"errors"
	"fmt"
	"io"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/bufpool"
	"github.com/dwellhttp/dwell/wait"
)

// ErrWrite marks an error of Copy's destination, as opposed to one of its source: a disk that
// is full, say. Copy wraps the destination's error with it, so that errors.Is finds both.
var ErrWrite = errors.New("dwell: writing the copy failed")

// Copy copies src to dst until src ends and returns how many bytes dst took. It is the way to
// store an upload without blocking the loop: each piece, of up to 256 KiB, is read from src in
// the handler — reading the request body parks the handler until the client sends — and then
// written to dst by wait.Do, on a worker, where a slow disk or a hash of the piece stalls no
// other connection. src is the request body (Reader(c)) or a part of a multipart body
// (MultipartReader); anything else must read without blocking the thread.
//
// A nil error means src ended cleanly, with io.EOF: for the request body, every byte the
// client declared (or its final chunk) has arrived and is in dst. Any other error means dst
// holds a truncated copy, which must not be kept as complete:
//
//   - io.ErrUnexpectedEOF: the client stopped before the end of its body (or of a multipart
//     body's closing boundary);
//   - core.ErrBodyTooLarge, a malformed chunked body, core.ErrTimeout, core.ErrClosed,
//     core.ErrShutdown: the body failed — c.BodyErr() says so too, and the server answers it
//     itself (413, 400, 408) if the handler writes nothing;
//   - an error wrapping ErrWrite: dst failed (the handler answers, 500 say);
//   - another error of src (a malformed multipart part).
//
// A client gone while a piece was being written makes Copy return core.ErrClosed once the
// write has finished. Call Copy from c's handler.
func Copy(c *core.Ctx, dst io.Writer, src io.Reader) (int64, error) {
	bp := bufpool.Get(pieceSize)[:pieceSize]
	defer bufpool.Put(bp)
	var written int64
	for {
		n, rerr := fill(src, bp[:])
		if n > 0 {
			piece := bp[:n]
			var k int
			var werr error
			if err := wait.Do(c, func() { k, werr = dst.Write(piece) }); err != nil {
				return written + int64(k), err
			}
			written += int64(k)
			if werr == nil && k < n {
				werr = io.ErrShortWrite
			}
			if werr != nil {
				return written, fmt.Errorf("%w: %w", ErrWrite, werr)
			}
		}
		if rerr == io.EOF {
			return written, nil
		}
		if rerr != nil {
			return written, rerr
		}
	}
}

// pieceSize is how much Copy gathers before handing it to a worker: large enough that the
// hand-off is paid rarely, small enough that an upload in progress costs little memory.
const pieceSize = 256 << 10

// fill reads from r until buf is full or r fails (io.EOF included). A reader that keeps
// returning nothing, which io.Reader discourages, fails with io.ErrNoProgress, as in bufio.
func fill(r io.Reader, buf []byte) (int, error) {
	n, empty := 0, 0
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
		if k > 0 {
			empty = 0
		} else if empty++; empty == 100 {
			return n, io.ErrNoProgress
		}
	}
	return n, nil
}
