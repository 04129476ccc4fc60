package serve

import (
	"errors"
	"io"
	"os"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/core/internal/wire"
)

// SendFile sends n bytes of f, from offset off, as the next part of the response body, with
// sendfile(2): the bytes go from the page cache to the socket without being copied through the
// process. Up to 16 KiB are read into the response instead, to leave with the head in one
// write. The head is committed first if it has not been (set Content-Length beforehand to
// avoid chunked framing). f only needs to stay open until SendFile returns: the handler parks
// until the file's bytes are written or copied, and if SendFile returns early (the client
// left, a shutdown ended the wait) the connection is closed with whatever of the file was not
// sent, since the body can no longer be completed. A file that turns out shorter than n
// (truncated meanwhile) ends the connection with an error. With a body filter installed
// (Seam.WrapBody) the file's bytes are read and written through the filter, unless it is
// Transparent. SendFile cannot be used from a continuation (ErrOutsideRequest).
func (cx *Ctx) SendFile(f *os.File, off, n int64) error {
	if !cx.owned() {
		return cx.misused("SendFile")
	}
	if err := cx.writeErr(); err != nil {
		return err
	}
	if n < 0 || off < 0 {
		return errors.New("dwell: SendFile with a negative offset or length")
	}
	c := cx.Carrier
	if !cx.InHandler() {
		return errSendFileRefused
	}
	if fl := cx.filter(); fl != nil {
		if t, ok := fl.(Transparent); !ok || !t.Transparent() {
			return cx.copyThroughFilter(f, off, n)
		}
	}
	if cx.DeclLen >= 0 && cx.Written+n > cx.DeclLen {
		return ErrBodyLength
	}
	if cx.NoBody() || n == 0 {
		cx.Written += n // a HEAD's count for its Content-Length
		return nil
	}
	file, err := netpoll.FileOf(f)
	if err != nil {
		return err // nothing counted: the body has none of the file
	}
	cx.Written += n
	if cx.Resp&RfCommitted == 0 {
		cx.Exchange.WriteHead(cx, false)
	}
	pool := &cx.Loop.Pool
	if cx.Resp&RfChunked != 0 {
		var hex [18]byte
		c.Out.Write(pool, wire.AppendChunkSize(hex[:0], n))
	}
	if n <= CopyFileMax {
		return cx.copyFile(file, off, n)
	}
	c.Out.AppendFile(&c.Loop.Pool, file, off, n)
	if cx.Resp&RfChunked != 0 {
		c.Out.Write(pool, CRLF)
	}
	if err := cx.sendQueued(); err != nil {
		return err
	}
	for c.State != StClosed && c.Out.HasFile() {
		if err := cx.ParkOnConn(ParkWrite); err != nil {
			cx.abandonFile()
			return err
		}
	}
	return cx.writeErr()
}

// abandonFile ends a response whose file segment SendFile can no longer see through: the
// segment (its descriptor may be closed and reused as soon as SendFile returns) and what is
// queued behind it are dropped, and the connection closes after what is before it, so the
// client sees the body cut.
func (cx *Ctx) abandonFile() {
	c := cx.Carrier
	if c.State == StClosed {
		return
	}
	c.Out.DropFiles(&cx.Loop.Pool)
	cx.Resp |= RfAbort | RfClose
}

// copyThroughFilter sends n bytes of f from off through the body filter, in pieces.
func (cx *Ctx) copyThroughFilter(f *os.File, off, n int64) error {
	_, err := io.Copy(cx, io.NewSectionReader(f, off, n))
	return err
}

// CopyFileMax is the largest file segment SendFile copies instead of splicing. Read into the
// write queue behind the head, a small file leaves with it in one write; sendfile would cost a
// second call, and its splice costs more than copying a few KiB.
const CopyFileMax = 16 << 10

// copyFile sends n bytes of the file f from offset off by reading them into the write queue.
func (cx *Ctx) copyFile(f netpoll.File, off, n int64) error {
	c := cx.Carrier
	pool := &c.Loop.Pool
	b := c.Out.Spare(pool, int(n))[:n]
	for got := 0; got < len(b); {
		k, e := netpoll.Pread(f, b[got:], off+int64(got))
		switch {
		case e == netpoll.EINTR:
			continue
		case e != 0 || k == 0: // k == 0: the file was truncated since its size was taken
			// As with sendfile, the client gets what there was, then the close that tells it
			// the body is incomplete.
			c.Out.Filled(pool, b[:got])
			c.Out.Send(cx.Exchange.Sender(), c.Loop.IOV, &c.Loop.Pool, nil)
			cx.Exchange.Close(ErrClosed)
			return ErrClosed
		}
		got += k
	}
	c.Out.Filled(pool, b)
	if cx.Resp&RfChunked != 0 {
		c.Out.Write(pool, CRLF)
	}
	return cx.send(nil)
}
