package middleware

import (
	"bytes"
	"compress/gzip"
	"iter"
	"strconv"
	"strings"
	"sync"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/syntax"
)

// CompressOptions configures Compress. The zero value compresses the usual text types from
// 1 KiB at gzip's default level.
type CompressOptions struct {
	// MinSize is the smallest body compressed, in bytes: below it, gzip's framing and the work
	// are not worth it. Zero means 1024; negative means every size.
	MinSize int

	// Types lists the media types compressed, without parameters, compared without regard to
	// case. A '*' stands for any text: "text/*", "application/*+json". Nil means text/html,
	// text/css, text/plain, text/javascript, text/csv, text/xml, text/markdown,
	// application/json, application/javascript, application/xml, application/wasm,
	// image/svg+xml, application/*+json and application/*+xml. An event stream
	// (text/event-stream) is better left out: a long stream would hold a compressor (some
	// hundreds of kilobytes) for its whole life.
	Types []string

	// Level is the gzip level, from gzip.BestSpeed (1) to gzip.BestCompression (9). Zero means
	// gzip.DefaultCompression.
	Level int
}

var defaultCompressTypes = []string{
	"text/html", "text/css", "text/plain", "text/javascript", "text/csv", "text/xml",
	"text/markdown", "application/json", "application/javascript", "application/xml",
	"application/wasm", "image/svg+xml", "application/*+json", "application/*+xml",
}

// Compress compresses response bodies with gzip (compress/gzip) for clients that accept it
// (Accept-Encoding, q-values honoured: "gzip;q=0" refuses it, "*" accepts it when gzip is not
// named). A body is compressed when its type is one of the compressible types and it reaches
// MinSize, or when the handler flushes it (a stream): it then gets Content-Encoding: gzip, a
// Content-Length the handler declared goes (the server counts the compressed body instead, or
// streams it chunked), a strong ETag becomes weak, since the bytes differ, and Accept-Ranges
// goes; a 304 that revalidates such a response (its If-None-Match names the weak tag) carries
// the weak tag too. Every response gets Vary: Accept-Encoding, compressed or not, so that
// caches keep the encodings apart.
//
// Nothing is compressed for HEAD, for a request with a Range (ranges count the bytes of the
// uncompressed body), for 1xx, 204, 206 and 304 responses, or for a body the handler encoded
// itself (Content-Encoding set). A request that cannot get a compressed answer (no gzip in
// Accept-Encoding, HEAD, a Range) gets no filter at all, so that its files still go out with
// sendfile(2); for the others, a file goes through the filter, read and written.
//
// Flush flushes the compressor, so a compressed stream still reaches the client as it is
// written, and writes keep their backpressure: a handler writing to a slow client parks as
// without compression. The compressors and buffers are pooled.
func Compress(o CompressOptions) func(core.Handler) core.Handler {
	z := &compressor{minSize: o.MinSize, types: o.Types, level: o.Level}
	if z.minSize == 0 {
		z.minSize = 1024
	}
	if z.types == nil {
		z.types = defaultCompressTypes
	}
	if z.level == 0 {
		z.level = gzip.DefaultCompression
	}
	if _, err := gzip.NewWriterLevel(nil, z.level); err != nil {
		panic("dwell: " + err.Error())
	}
	z.filters.New = func() any {
		f := &gzipFilter{z: z}
		f.install = f.wrap
		return f
	}
	return func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			c.AddHeader("Vary", "Accept-Encoding")
			rng, _ := c.Bytes().Header("Range")
			if c.Method() == "HEAD" || rng != nil || !acceptsGzip(c.Bytes().HeaderValues("Accept-Encoding")) {
				// Nothing to compress: no filter, so that a file still goes out with sendfile.
				next(c)
				return
			}
			f := z.filters.Get().(*gzipFilter)
			f.c = c
			c.Seam().WrapBody(f.install)
			next(c)
		}
	}
}

// A compressor is one Compress middleware's settings and pools.
type compressor struct {
	minSize int
	types   []string
	level   int
	filters sync.Pool // *gzipFilter
	writers sync.Pool // *gzip.Writer at level
}

// compressible reports whether a Content-Type value names a type to compress.
func (z *compressor) compressible(ct string) bool {
	if ct == "" {
		ct = "text/plain" // the server's default
	}
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(mt)
	for _, t := range z.types {
		if matchType(t, mt) {
			return true
		}
	}
	return false
}

// matchType matches a media type against a pattern with at most one '*'.
func matchType(pattern, mt string) bool {
	pre, suf, star := strings.Cut(pattern, "*")
	if !star {
		return strings.EqualFold(pattern, mt)
	}
	return len(mt) >= len(pre)+len(suf) && strings.EqualFold(mt[:len(pre)], pre) && strings.EqualFold(mt[len(mt)-len(suf):], suf)
}

// A gzipFilter is the body filter of one response. It holds the body's first bytes until it
// knows whether to compress: once MinSize bytes came, or at the first Flush, or at the end.
type gzipFilter struct {
	z       *compressor
	c       *core.Ctx
	next    core.BodyWriter
	state   filterState
	held    []byte
	gz      *gzip.Writer
	install func(core.BodyWriter) core.BodyWriter // f.wrap, made once: a method value per request would allocate
}

type filterState uint8

const (
	undecided filterState = iota
	passing
	compressing
)

// wrap installs the filter in front of next; it is the function given to WrapBody.
func (f *gzipFilter) wrap(next core.BodyWriter) core.BodyWriter {
	f.next = next
	return f
}

func (f *gzipFilter) Write(p []byte) (int, error) {
	switch f.state {
	case passing:
		return f.next.Write(p)
	case compressing:
		return f.gz.Write(p)
	}
	if len(f.held)+len(p) < f.z.minSize {
		f.held = append(f.held, p...)
		return len(p), nil
	}
	if err := f.decide(true); err != nil {
		return 0, err
	}
	return f.Write(p)
}

func (f *gzipFilter) Flush() error {
	if f.state == undecided {
		if err := f.decide(true); err != nil {
			return err
		}
	}
	if f.state == compressing {
		if err := f.gz.Flush(); err != nil {
			return err
		}
	}
	return f.next.Flush()
}

// Transparent decides, if it has not, whether the response is compressed, and reports whether it
// goes as it is: then core.Ctx.SendFile sends a file around the filter, with sendfile(2). The
// size is judged by the declared Content-Length, the only size known before the file's bytes;
// without one, a response that may be compressed stays undecided, and the file's bytes, read
// and written through the filter, are judged as any body's.
func (f *gzipFilter) Transparent() bool {
	if f.state == undecided && len(f.held) == 0 {
		n, err := strconv.ParseInt(f.c.ResponseHeader("Content-Length"), 10, 64)
		if err != nil && f.eligible() {
			return false
		}
		if f.decide(err == nil && n >= int64(f.z.minSize)) != nil {
			return false
		}
	}
	if f.state != passing {
		return false
	}
	t, ok := f.next.(core.Transparent)
	return ok && t.Transparent()
}

// Close ends the body, then puts the filter back in its pool: the server calls it once, when
// the handler or its continuation has finished.
func (f *gzipFilter) Close() error {
	var err error
	if f.state == undecided {
		err = f.decide(false)
	}
	if f.state == compressing {
		if cerr := f.gz.Close(); err == nil {
			err = cerr
		}
		f.gz.Reset(nil)
		f.z.writers.Put(f.gz)
	}
	if cerr := f.next.Close(); err == nil {
		err = cerr
	}
	*f = gzipFilter{z: f.z, held: f.held[:0], install: f.install}
	f.z.filters.Put(f)
	return err
}

// decide chooses, before any byte goes on, between compressing and passing the body as it is,
// and writes on what was held. big says the body is worth compressing by its size.
func (f *gzipFilter) decide(big bool) error {
	c := f.c
	f.state = passing
	if c.ResponseStatus() == 304 {
		f.notModified()
	}
	if !big || !f.eligible() {
		return f.writeHeld()
	}
	f.state = compressing
	c.SetHeader("Content-Encoding", "gzip")
	c.DelHeader("Content-Length")
	c.DelHeader("Accept-Ranges")
	if etag := c.ResponseHeader("ETag"); strings.HasPrefix(etag, `"`) {
		c.SetHeader("ETag", "W/"+etag)
	}
	gz, _ := f.z.writers.Get().(*gzip.Writer)
	if gz == nil {
		gz, _ = gzip.NewWriterLevel(f.next, f.z.level)
	} else {
		gz.Reset(f.next)
	}
	f.gz = gz
	return f.writeHeld()
}

// notModified gives a 304 the ETag the 200 it stands for carried (RFC 9110 §15.4.5): weak when
// the client's If-None-Match names the weak tag a compressed 200 had, so that a cache can
// freshen the compressed copy it holds (RFC 9111 §4.3.4 matches a strong tag only to a strong
// one).
func (f *gzipFilter) notModified() {
	etag := f.c.ResponseHeader("ETag")
	if !strings.HasPrefix(etag, `"`) {
		return
	}
	weak := "W/" + etag
	for v := range f.c.Bytes().HeaderValues("If-None-Match") {
		if listHas(v, weak) {
			f.c.SetHeader("ETag", weak)
			return
		}
	}
}

// listHas reports whether a comma-separated list of entity tags has tag as an element. An
// entity tag holds no '"' inside its quotes, so a match that starts and ends at an element's
// bounds is that element.
func listHas(list []byte, tag string) bool {
	for i := 0; ; {
		k := bytes.Index(list[i:], []byte(tag))
		if k < 0 {
			return false
		}
		start, end := i+k, i+k+len(tag)
		before := bytes.TrimRight(list[:start], " \t")
		after := bytes.TrimLeft(list[end:], " \t")
		if (len(before) == 0 || before[len(before)-1] == ',') && (len(after) == 0 || after[0] == ',') {
			return true
		}
		i = end
	}
}

// eligible reports whether the response may be compressed, its size aside: a status with a
// body that is the whole representation, of a compressible type, not encoded already.
func (f *gzipFilter) eligible() bool {
	c := f.c
	status := c.ResponseStatus()
	return status >= 200 && status != 204 && status != 206 && status != 304 &&
		c.ResponseHeader("Content-Encoding") == "" && f.z.compressible(c.ResponseHeader("Content-Type"))
}

// writeHeld writes on the bytes held before the decision.
func (f *gzipFilter) writeHeld() error {
	if len(f.held) == 0 {
		return nil
	}
	held := f.held
	f.held = f.held[:0]
	_, err := f.Write(held)
	return err
}

// acceptsGzip reports whether Accept-Encoding accepts gzip (RFC 9110 §12.5.3): gzip or x-gzip
// named with a q-value above 0, or, when neither is named, "*" with one. Its field lines are
// one list (RFC 9110 §5.3), in order.
func acceptsGzip(lines iter.Seq[[]byte]) bool {
	star := false
	for v := range lines {
		for len(v) > 0 {
			var elem []byte
			elem, v, _ = bytes.Cut(v, []byte(","))
			coding, params, _ := bytes.Cut(elem, []byte(";"))
			coding = bytes.TrimSpace(coding)
			q := syntax.QValue(params) > 0
			switch {
			case bytes.EqualFold(coding, []byte("gzip")), bytes.EqualFold(coding, []byte("x-gzip")):
				return q
			case string(coding) == "*":
				star = q
			}
		}
	}
	return star
}
