// Package body is the user-facing side of request and response bodies: reading a request body
// in pieces or whole, with limits, and serving files and seekable content with Range and
// conditional requests.
//
// # Reading
//
// A request body is never held by the server unless the handler asks. Read (and Reader) hand
// the handler the bytes that have arrived; when none are left the handler parks until the
// client sends more, and the loop serves other connections meanwhile. When nothing is buffered
// the socket is read straight into the handler's slice, so a large upload is copied once.
// ReadAll gathers a body under a limit, growing its buffer only as bytes arrive, never by the
// length the client declared. Discard reads a body to its end to keep the connection.
//
// A client that sent Expect: 100-continue gets its 100 Continue on the first read, not before:
// a handler that answers without reading (401, 413) never makes it send the body. ReadAll
// refuses a declared Content-Length over its limit before reading anything, so such a client
// is refused without sending the body either.
//
// Errors are sticky and come from the core: core.ErrBodyTooLarge past Options.MaxBodyBytes, a
// malformed chunked body, io.ErrUnexpectedEOF when the client stops mid-body, core.ErrTimeout,
// core.ErrClosed. If the handler then writes nothing, the server answers a malformed body with
// 400, one over MaxBodyBytes with 413 and one that stopped coming with 408, and closes the
// connection. A handler that leaves a body unread need not do anything: the
// server discards up to 256 KiB of it to keep the connection, and closes it otherwise.
//
// # JSON, forms and uploads
//
// ReadJSON decodes a JSON body under a limit and WriteJSON answers with one; ReadForm reads an
// url-encoded form; MultipartReader streams a multipart body part by part. What they refuse
// comes as an *Error that carries its status (400, 413, 415) and a message for the client
// naming what is wrong and where. Copy stores an upload — the body, or a multipart part —
// reading each piece on the loop and writing it with wait.Do, off the loop; only its nil error
// says the body arrived whole (io.ErrUnexpectedEOF: the client stopped early).
//
// # Responses and files
//
// A response body streams with backpressure: past core.Options.WriteHighWater a writing handler
// parks until the client has taken half, so a slow client costs a bounded amount of memory —
// a single large Write goes to the kernel from the handler's own buffer while the handler
// parks on it. ServeContent, ServeFile and ServeRoot stream the same way: regular files go out
// with sendfile(2) (core.Ctx.SendFile, which reads a small file into the response instead),
// other content is copied in 32 KiB pieces.
//
// ServeContent implements, for GET and HEAD, the parts of RFC 9110 a static file needs: a
// Content-Type from the name's extension or from the first 512 bytes; Last-Modified and an
// ETag; the preconditions If-Match, If-Unmodified-Since, If-None-Match and If-Modified-Since
// (§13.2.2, in that order, dates at second precision); a single byte range (206, or 416 when it
// cannot be satisfied), honouring If-Range. A request for several ranges gets the whole content
// with 200, which RFC 9110 §14.2 allows: multipart/byteranges responses are rarely used and
// easy to abuse.
//
// An FS (NewFS) serves the files of an fs.FS — an embed.FS, say — the same way, with a strong
// ETag from the content where the FS keeps no modification times (hashed once per file), the
// Cache-Control it is given, and a precompressed name.br or name.gz in place of name for a
// client whose Accept-Encoding accepts it.
//
// File serving makes blocking calls on the loop — open, stat, and sendfile when the page cache
// is cold — as nginx does without thread pools. They are short on local disks; a loop serving
// files from slow or network storage stalls its other connections meanwhile.
package body
