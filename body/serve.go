package body

import (
	"io"
	"os"
	"strconv"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/bufpool"
)

// ServeContent answers the request with content, a representation named name last modified at
// modtime. It is the core of ServeFile and ServeRoot for content that is not a file on disk, or
// that the handler opened itself.
//
// Content-Type comes from the handler if it set one, else from name's extension, else from
// sniffing the first 512 bytes. Last-Modified is sent when modtime is known (not zero nor the
// Unix epoch), and with it, unless the handler set its own ETag, a strong ETag derived from
// modtime and the size. Preconditions are answered with 304 or 412. For GET and HEAD a single
// byte range is answered with 206 (or 416 with Content-Range: bytes */size), several ranges
// with the whole content; see the package doc. HEAD gets the headers, Content-Length included,
// and no body. Other methods get the content like GET, without ranges: refuse them first if
// they should not.
//
// content is read from offset 0 to its end (found with Seek). An *os.File that is a regular
// file goes out with sendfile(2); anything else is copied in pieces with Write, each parking
// the handler while the client is slow. Call ServeContent before writing any of the body.
func ServeContent(c *core.Ctx, name string, modtime time.Time, content io.ReadSeeker) {
	size, err := content.Seek(0, io.SeekEnd)
	if err == nil {
		_, err = content.Seek(0, io.SeekStart)
	}
	if err != nil {
		fail(c, 500)
		return
	}
	f, _ := content.(*os.File)
	if f != nil {
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f = nil
		}
	}
	serve(c, resource{name: name, modtime: modtime, size: size, content: content, file: f})
}

// A resource is what serve sends: content of size bytes, and file when it can go out with
// sendfile. file is only ever read at explicit offsets (SendFile, ReadAt), never through its
// own offset, so one open file can serve several requests at once.
type resource struct {
	name    string
	modtime time.Time
	size    int64
	content io.ReadSeeker
	file    *os.File

	// Last-Modified and ETag as serve would format them from modtime and size, when already
	// known (the open-file cache keeps them); empty means serve formats them. An FS gives an
	// etag even without a modtime: one made from the content.
	lastModified, etag string

	// What an FS knows of a representation it keeps described (see fs.go): its type, so that
	// serve neither guesses nor sniffs; its content coding, sent only with the content (not
	// with a 304, 412 or 416, whose bodies are not encoded); the Cache-Control for 2xx and 304,
	// and for no error. at, when set, is read at explicit offsets in place of content.
	ctype, encoding, cacheControl string
	at                            io.ReaderAt
}

// serve answers with r after evaluating the request's preconditions and Range.
func serve(c *core.Ctx, r resource) {
	var v validators
	if knownTime(r.modtime) {
		v.modtime = r.modtime.Truncate(time.Second) // HTTP dates have second precision
		lm := r.lastModified
		if lm == "" {
			lm = formatTime(v.modtime)
		}
		c.SetHeader("Last-Modified", lm)
	}
	v.etag = c.ResponseHeader("ETag")
	if v.etag == "" {
		v.etag = r.etag
		if v.etag == "" && knownTime(r.modtime) {
			v.etag = makeETag(r.modtime, r.size)
		}
		if v.etag != "" {
			c.SetHeader("ETag", v.etag)
		}
	}
	switch precondition(c, v) {
	case 304:
		// RFC 9110 §15.4.5: the validators, Cache-Control, and no representation metadata;
		// Last-Modified is redundant beside an ETag.
		if v.etag != "" {
			c.DelHeader("Last-Modified")
		}
		c.DelHeader("Content-Type")
		if r.cacheControl != "" {
			c.SetHeader("Cache-Control", r.cacheControl)
		}
		c.SetStatus(304)
		return
	case 412:
		fail(c, 412)
		return
	}
	get := c.Method() == "GET" || c.Method() == "HEAD"
	off, n := int64(0), r.size
	status := 200
	if rh := c.Header("Range"); rh != "" && get && ifRange(c, v) {
		o, k, kind := parseRange(rh, r.size)
		switch kind {
		case rangePart:
			off, n, status = o, k, 206
			c.SetHeader("Content-Range", contentRange(off, n, r.size))
		case rangeBad:
			c.SetHeader("Content-Range", "bytes */"+strconv.FormatInt(r.size, 10))
			fail(c, 416)
			return
		}
	}
	if c.ResponseHeader("Content-Type") == "" {
		ctype := r.ctype
		if ctype == "" {
			ctype = typeByName(r.name)
		}
		if ctype == "" {
			var err error
			if ctype, err = sniffContent(r); err != nil {
				fail(c, 500)
				return
			}
		}
		c.SetHeader("Content-Type", ctype)
	}
	if r.encoding != "" {
		c.SetHeader("Content-Encoding", r.encoding)
	}
	if r.cacheControl != "" {
		c.SetHeader("Cache-Control", r.cacheControl)
	}
	c.SetHeader("Accept-Ranges", "bytes")
	var digits [20]byte // SetHeader keeps no part of the value, so the conversion can stay on the stack
	c.SetHeader("Content-Length", string(strconv.AppendInt(digits[:0], n, 10)))
	c.SetStatus(status)
	if c.Method() == "HEAD" || n == 0 {
		return
	}
	if r.file != nil {
		// Errors mean the client is gone or the file shrank; either way the connection ends
		// and there is no one left to tell.
		c.SendFile(r.file, off, n)
		return
	}
	if r.at != nil {
		copyAt(c, r.at, off, n)
		return
	}
	copyContent(c, r.content, off, n)
}

// contentRange formats the Content-Range of a 206 (RFC 9110 §14.4).
func contentRange(off, n, size int64) string {
	b := make([]byte, 0, 64)
	b = append(b, "bytes "...)
	b = strconv.AppendInt(b, off, 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, off+n-1, 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, size, 10)
	return string(b)
}

// copySize is the piece copyContent reads and writes at a time: a few of them fit under the
// write high-water mark, so the handler parks between pieces rather than queueing a copy.
const copySize = 32 << 10

// copyContent writes n bytes of content from off. A short read leaves the response shorter
// than its Content-Length, which makes the server close the connection: the client sees the
// truncation instead of a wrong body.
func copyContent(c *core.Ctx, content io.ReadSeeker, off, n int64) {
	if _, err := content.Seek(off, io.SeekStart); err != nil {
		return
	}
	bp := bufpool.Get(copySize)[:copySize]
	defer bufpool.Put(bp)
	empty := 0
	for n > 0 {
		k, err := content.Read(bp[:min(int64(copySize), n)])
		if k > 0 {
			if _, werr := c.Write(bp[:k]); werr != nil {
				return
			}
			n -= int64(k)
			empty = 0
		}
		if err != nil {
			return
		}
		if k == 0 {
			// Nothing and no error: io.Reader allows it now and then, but a reader that
			// keeps at it must not spin the loop. Give up as bufio does (io.ErrNoProgress).
			if empty++; empty == maxEmptyReads {
				return
			}
		}
	}
}

// maxEmptyReads is how many reads in a row may return nothing and no error before
// copyContent gives up on the content, as bufio's readers do.
const maxEmptyReads = 100

// copyAt is copyContent for content read at explicit offsets, which several requests may
// read at once.
func copyAt(c *core.Ctx, content io.ReaderAt, off, n int64) {
	bp := bufpool.Get(copySize)[:copySize]
	defer bufpool.Put(bp)
	for n > 0 {
		k, err := content.ReadAt(bp[:min(int64(copySize), n)], off)
		if k > 0 {
			if _, werr := c.Write(bp[:k]); werr != nil {
				return
			}
			off += int64(k)
			n -= int64(k)
		}
		if err != nil || k == 0 {
			// io.EOF before n: the content shrank, and the short body closes the connection.
			// (Nothing and no error breaks io.ReaderAt's contract; it must not spin the loop.)
			return
		}
	}
}

// sniffContent reads the first bytes of r to guess its type, and leaves content at offset 0.
func sniffContent(r resource) (string, error) {
	bp := bufpool.Get(copySize)[:copySize]
	defer bufpool.Put(bp)
	buf := bp[:min(int64(sniffLen), r.size)]
	var err error
	if r.file != nil {
		_, err = r.file.ReadAt(buf, 0) // pread: the file offset stays where it is
	} else {
		_, err = io.ReadFull(r.content, buf)
		if err == nil {
			_, err = r.content.Seek(0, io.SeekStart)
		}
	}
	if err != nil && err != io.EOF {
		return "", err
	}
	return sniff(buf), nil
}

// fail answers with a short plain-text error. What described the content — its coding, its
// validators, the part of it sent — does not describe the error's text, and goes (as in
// net/http); a 416's Content-Range says the content's size, and stays.
func fail(c *core.Ctx, status int) {
	c.DelHeader("Content-Length")
	c.DelHeader("Content-Encoding")
	c.DelHeader("ETag")
	c.DelHeader("Last-Modified")
	if status != 416 {
		c.DelHeader("Content-Range")
	}
	c.SetStatus(status)
	c.SetHeader("Content-Type", "text/plain; charset=utf-8")
	c.WriteString(strconv.Itoa(status) + " " + core.StatusText(status) + "\n")
}
