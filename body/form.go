package body

import (
	"fmt"
	"mime"
	"mime/multipart"
	"net/url"

	"github.com/dwellhttp/dwell/core"
)

// ReadForm reads an application/x-www-form-urlencoded request body — an HTML form posted —
// of at most limit bytes (zero means DefaultLimit, negative no bound of ReadForm's own) and
// returns its fields, decoded as url.ParseQuery does. It refuses with an *Error: 415 a body of
// another Content-Type (before reading it), 413 one over the limit (as ReadJSON does), 400 a
// malformed one (a bad percent escape, a semicolon separator). Query parameters of the target
// are not included: read them with c.Query and c.Bytes().QueryValues. Call ReadForm from c's
// handler.
func ReadForm(c *core.Ctx, limit int64) (url.Values, error) {
	ct := c.Header("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, &Error{Status: 415, Msg: fmt.Sprintf("Content-Type %q is not a form; want application/x-www-form-urlencoded", ct), Err: err}
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
// NextPart and a part's Read return io.ErrUnexpectedEOF when the body ends before its closing
// boundary: whatever was stored from that part is truncated. It refuses with an *Error: 415 a
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
	return multipart.NewReader(Reader(c), boundary), nil
}
