package body

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/url"

	"github.com/dwellhttp/dwell/core"
)

// ReadForm reads an application/x-www-form-urlencoded request body — an HTML form posted —
// of at most limit bytes (zero means DefaultLimit, negative no bound of ReadForm's own) and
// returns its fields, decoded as url.ParseQuery does. It refuses with an *Error: 415 a body of
// another Content-Type or with a content coding (before reading it, as ReadJSON does), 413 one
// over the limit (as ReadJSON does), 400 a
// malformed one (a bad percent escape, a semicolon separator). Query parameters of the target
// are not included: read them with c.Query and c.Bytes().QueryValues. Call ReadForm from c's
// handler.
func ReadForm(c *core.Ctx, limit int64) (url.Values, error) {
	ct := c.Header("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, &Error{Status: 415, Msg: fmt.Sprintf("Content-Type %q is not a form; want application/x-www-form-urlencoded", ct), Err: err}
	}
	if err := checkUnencoded(c); err != nil {
		return nil, err
	}
	b, err := readLimited(c, limit)
	if err != nil {
		return nil, err
	}
	v, err := url.ParseQuery(string(b))
	if err != nil {
		return nil, &Error{Status: 400, Msg: "malformed form: " + err.Error(), Err: err}
	}
	return v, nil
}

// MultipartReader returns a reader of the request's multipart/form-data (or multipart/mixed)
// body, part by part, as net/http's Request.MultipartReader does: it streams, holding only a
// small buffer, and never spills a part to disk. Reading a part parks the handler while the
// client sends; to store a file part, hand it to Copy, which writes it off the loop:
//
//	for {
//		p, err := mr.NextPart()
//		if err == io.EOF {
//			break // the body ended cleanly, after its closing boundary
//		}
//		...
//		n, err := body.Copy(c, f, p)
//	}
//
// NextPart and a part's Read return an error that is io.ErrUnexpectedEOF (errors.Is) when the
// body ends before its closing boundary — within a part, whatever was stored from it is
// truncated; after a part's boundary line, or with no part at all, the form is incomplete — so
// that only a whole form ends with io.EOF. It refuses with an *Error: 415 a
// body that is not multipart, 400 one without a boundary parameter. Bound the body with
// core.Seam.LimitBody (or Options.MaxBodyBytes): a part's header section may take up to the
// 10 MiB mime/multipart allows. Call it, and read the parts, from c's handler.
func MultipartReader(c *core.Ctx) (*multipart.Reader, error) {
	ct := c.Header("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "multipart/form-data" && mt != "multipart/mixed" {
		return nil, &Error{Status: 415, Msg: fmt.Sprintf("Content-Type %q is not multipart; want multipart/form-data", ct), Err: err}
	}
	boundary := params["boundary"]
	if boundary == "" {
		return nil, &Error{Status: 400, Msg: "multipart Content-Type without a boundary"}
	}
	return multipart.NewReader(newCloseWatch(Reader(c), boundary), boundary), nil
}

// A closeWatch is a multipart body as mime/multipart reads it: it watches for the close
// delimiter ("--" boundary "--" at a line's start, RFC 2046 §5.1.1) going by, and reports the
// body's end before it as io.ErrUnexpectedEOF, where mime/multipart would take a body cut just
// after a part's boundary line (or an empty one) for a form that ended. A boundary cannot
// occur in the parts' content, so the first match is the close delimiter.
type closeWatch struct {
	r      io.Reader
	delim  []byte // "\n--" boundary "--": a line feed ends every line, with or without CR
	window []byte // the last len(delim)-1 bytes read, then what was just read, for a delimiter split across reads
	closed bool   // the close delimiter went by
}

func newCloseWatch(r io.Reader, boundary string) *closeWatch {
	delim := []byte("\n--" + boundary + "--")
	w := &closeWatch{r: r, delim: delim, window: make([]byte, 0, 2*len(delim))}
	w.window = append(w.window, '\n') // the body's start is a line's start
	return w
}

func (w *closeWatch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if !w.closed && n > 0 {
		w.watch(p[:n])
	}
	if err == io.EOF && !w.closed {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// watch looks for the close delimiter in b and across the read before it.
func (w *closeWatch) watch(b []byte) {
	keep := len(w.delim) - 1
	head := b[:min(len(b), keep)]
	if bytes.Contains(append(w.window, head...), w.delim) || bytes.Contains(b, w.delim) {
		w.closed = true
		return
	}
	// The window keeps the last keep bytes read, whatever the reads' sizes.
	if len(b) >= keep {
		w.window = append(w.window[:0], b[len(b)-keep:]...)
		return
	}
	w.window = append(w.window, b...)
	if extra := len(w.window) - keep; extra > 0 {
		w.window = w.window[:copy(w.window, w.window[extra:])]
	}
}
