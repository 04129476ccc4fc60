package websocket

import (
	"io"

	"github.com/dwellhttp/dwell/internal/bufpool"
)

// NextWriter returns a writer for one message of type typ: what is written to it is gathered,
// and sent as one message when it is closed (with WriteMessage's waiting): in the handler, as
// WriteMessage is (goroutines use the Remote's NextWriter). Close sends the
// message, and must be called; writing after it fails. A writer is one small allocation (it
// may be kept by a caller past its Close, so it is never reused); WriteMessage is the way
// that allocates nothing.
func (c *Conn) NextWriter(typ MessageType) (io.WriteCloser, error) {
	if typ != Text && typ != Binary {
		return nil, errBadType
	}
	return &messageWriter{c: c, typ: typ}, nil
}

// A messageWriter gathers a message for NextWriter, in a message buffer.
type messageWriter struct {
	c   *Conn
	r   *Remote // a Remote's writer: sent with the Remote's WriteMessage
	typ MessageType
	buf []byte
}

func (w *messageWriter) Write(p []byte) (int, error) {
	if w.c == nil {
		return 0, ErrClosed
	}
	w.buf = appendBuf(w.buf, p)
	return len(p), nil
}

// Close sends the message.
func (w *messageWriter) Close() error {
	c := w.c
	if c == nil {
		return ErrClosed
	}
	var err error
	if w.r != nil {
		err = w.r.WriteMessage(w.typ, w.buf)
	} else {
		err = c.WriteMessage(w.typ, w.buf)
	}
	bufpool.Put(w.buf)
	w.c, w.r, w.buf = nil, nil, nil
	return err
}
