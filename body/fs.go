package body

import (
	"bytes"
	"embed"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/dwellhttp/dwell/core"
)

// FSOptions configures an FS. The zero value serves files with validators and no
// Cache-Control.
type FSOptions struct {
	// CacheControl is the Cache-Control value sent with every file served (200, 206 and 304),
	// replacing one the handler set, and with no error. Empty sends none (but the handler's),
	// which leaves caches to revalidate with the ETag, or to guess a freshness from
	// Last-Modified where the FS gives modification times. For fingerprinted assets, whose
	// name changes with their content, "public, max-age=31536000, immutable" spares even the
	// revalidation; for a page whose name stays, "no-cache" makes caches revalidate every time
	// (a 304 when nothing changed).
	CacheControl string
}

// An FS serves the files of an fs.FS — an embed.FS, an fstest.MapFS, a zip archive, an
// os.DirFS — as ServeFile does those of a directory: with a Content-Type from the name's
// extension (or the first 512 bytes), validators, the preconditions of RFC 9110 §13, a single
// byte range, HEAD, and no directory listings. Create one with NewFS; its methods may be
// called from any loop at once.
//
// # Validators
//
// A file whose FS gives a modification time gets Last-Modified and the ETag that ServeFile
// would give it (from the time and the size). One whose FS gives none — every file of an
// embed.FS — gets a strong ETag made from a SHA-256 of its content, computed on the first
// request for it, on a wait.Do worker when the file is over 64 KiB, and kept: no request
// hashes a file the FS already described.
//
// What the FS describes is kept for up to 1024 names; past that, one name is forgotten to make
// room, and described again if asked for again. The files of an embed.FS never change: they
// are opened once and read from the kept file, so that a request costs no open. Any other FS
// may change under the server, so its files are opened on every request and checked against
// their description by size and modification time, and described anew when either differs.
// An FS that gives no modification time and rewrites a file keeping its size is not noticed:
// give such an FS modification times, or restart the server when it changes. fs.Sub of an
// embed.FS is not known for one: its files are hashed once too, but opened on every request.
//
// # Precompressed files
//
// Beside a file, the FS may hold it compressed: name.br (Brotli) and name.gz (gzip). For a
// client whose Accept-Encoding accepts one (q-values honoured), the compressed file is sent
// instead, with Content-Encoding, the Content-Type of the file itself, and validators of its
// own: its ETag ends in "-br" or "-gzip", so that it never matches the identity's. Brotli is
// preferred where the client weighs both alike; the file itself is sent where the client
// weighs it ("identity", or "*") above both, and where the client accepts neither — even
// "identity;q=0" then gets the file itself, as RFC 9110 §12.5.3 allows, rather than a 406.
// A request without Accept-Encoding gets the file itself. Every response for a file with a
// compressed sibling says Vary: Accept-Encoding, so that caches keep the codings apart.
//
// A Range applies to the bytes sent, those of the compressed file when one is sent, as RFC
// 9110 §14.2 has it (ranges address the selected representation) and as nginx's gzip_static
// does: a client resumes a download with the strong ETag of the representation it holds, in
// If-Range. Which siblings exist is found when the file is described: a sibling added later
// is noticed once the file itself changes; one changed or removed is noticed when next sent.
// A compressed sibling without the file itself is never served in its place: the name is 404.
//
// # Names and directories
//
// Names are those of fs.ValidPath: a request's name with a ".." segment, a backslash or a NUL
// byte is refused with 400, as by ServeRoot, and no other name can reach outside the FS —
// except through what the FS itself lets out: os.DirFS follows symbolic links out of its
// directory, where os.Root's FS and ServeRoot do not. Names starting with a dot are served
// like any other (embed leaves them out unless told "all:").
//
// A directory is served as its index.html, and 404 without one; requested without a trailing
// slash, it is redirected (301) to the name with one, as ServeFile does. Unlike
// http.FileServerFS, FS lists no directory and does not redirect ".../index.html" to ".../":
// both names serve the page. Anything but a regular file or a directory (a FIFO, a device, a
// socket) is answered 404; where the FS can stat a name without opening it (fs.StatFS, as
// os.DirFS can), that is found before any open, since opening a FIFO would block the loop.
type FS struct {
	fsys         fs.FS
	cacheControl string
	fixed        bool // an embed.FS: its files never change, so they are described once and kept open

	mu      sync.RWMutex
	entries map[string]*fsEntry // by name in fsys; at most maxFSEntries
}

// NewFS returns an FS serving the files of fsys.
func NewFS(fsys fs.FS, o FSOptions) *FS {
	if fsys == nil {
		panic("dwell: NewFS with a nil fs.FS")
	}
	s := &FS{fsys: fsys, cacheControl: o.CacheControl, entries: make(map[string]*fsEntry)}
	switch fsys.(type) {
	case embed.FS, *embed.FS:
		s.fixed = true
	}
	return s
}

// Serve answers the request with the file name of the FS, as the FS doc says. name is
// slash-separated and already percent-decoded, as core.Ctx.Path and route parameters are; a
// leading slash is optional, a trailing one names a directory only (as in ServeRoot), and ""
// or "/" is the FS's root directory. Serve keeps no reference
// to name once it returns, nor hands it to the fs.FS, so a borrowed string will do. Call Serve
// before writing any of the body.
func (s *FS) Serve(c *core.Ctx, name string) {
	rel, ok := fsName(name)
	if !ok {
		fail(c, 400)
		return
	}
	// A second round only follows a file found changed since it was described, before anything
	// was sent; that round describes it afresh from the file it opens, and sends that file,
	// unless another request kept a description as stale meanwhile (a file changing under
	// load): 503 then, which the client may retry.
	dirOnly := namesDir(name, rel)
	for range 2 {
		e, f, status := s.lookup(c, rel)
		if e != nil && !e.dir && dirOnly {
			if f != nil {
				f.Close()
			}
			fail(c, 404) // "page.html/": no directory by that name
			return
		}
		if e != nil && e.dir {
			e, f, status = s.index(c, e)
		}
		if e == nil {
			if status != 0 {
				fail(c, status)
			}
			return
		}
		if s.send(c, e, f) {
			return
		}
	}
	fail(c, 503)
}

// index returns the entry of directory d's index.html, or answers the request itself with a
// redirect to the directory's name with a slash (the entry is then nil, and so is the status).
func (s *FS) index(c *core.Ctx, d *fsEntry) (*fsEntry, fs.File, int) {
	e, f, status := s.lookup(c, d.index)
	switch {
	case e == nil:
		return nil, nil, status
	case e.dir:
		return nil, nil, 404
	case !bytes.HasSuffix(c.Bytes().Path(), []byte("/")):
		if f != nil {
			f.Close()
		}
		redirectToDir(c)
		return nil, nil, 0
	}
	return e, f, 0
}

// send answers with the representation of e that the request's Accept-Encoding selects. f is
// the file itself, when lookup opened it; send closes it. It returns false, having sent
// nothing, when the representation it opened is not the one described: the entry is then
// dropped, for the caller to describe it again.
func (s *FS) send(c *core.Ctx, e *fsEntry, f fs.File) bool {
	k := identity
	if e.vary {
		cw := newCodingWeights()
		for ae := range c.Bytes().HeaderValues("Accept-Encoding") {
			cw.add(ae)
		}
		k = cw.choose(e.available())
	}
	r := &e.reps[k]
	if r.at == nil && (k != identity || f == nil) {
		// An FS that may change: open what is sent, and check it is what was described.
		g, fi, _ := s.open(r.name)
		if g == nil || !r.same(fi) {
			if g != nil {
				g.Close()
			}
			s.drop(e)
			if f == nil {
				return false
			}
			k, r = identity, &e.reps[identity] // f was described with e: send it as it is
		} else {
			if f != nil {
				f.Close()
			}
			f = g
		}
	}
	if f != nil {
		defer f.Close()
	}
	if e.vary {
		c.AddHeader("Vary", "Accept-Encoding")
	}
	res := resource{name: r.name, modtime: r.modtime, size: r.size, lastModified: r.lastModified,
		etag: r.etag, ctype: e.ctype, encoding: codings[k].name, cacheControl: s.cacheControl, at: r.at}
	if f != nil {
		res.at = readerAt(f)
		if of, ok := f.(*os.File); ok {
			res.file = of // sendfile(2); the open file is regular, as described
		}
	}
	serve(c, res)
	return true
}

// lookup returns the entry for rel, described now if none is kept, and the file itself when
// it had to open it (a directory is closed). A kept entry may be stale on an FS that may
// change: send finds out. With a nil entry, status says why.
func (s *FS) lookup(c *core.Ctx, rel string) (*fsEntry, fs.File, int) {
	s.mu.RLock()
	e := s.entries[rel]
	s.mu.RUnlock()
	if e != nil {
		// A kept file needs no open; send opens any other, and checks it.
		return e, nil, 0
	}
	name := strings.Clone(rel) // rel may be borrowed, and fsys may keep what it is given
	f, fi, status := s.open(name)
	if f == nil {
		return nil, nil, status
	}
	e, f, status = s.describe(c, name, f, fi)
	if e != nil && (s.fixed || !e.dir) {
		// A directory of an FS that may change is not kept: it could become a file, which a
		// kept directory would hide.
		s.store(e)
	}
	return e, f, status
}

// open opens name in the FS and stats it; on failure the file is nil and the status says why.
// Where the FS can stat a name without opening it (fs.StatFS: os.DirFS, os.Root's FS), a name
// that is neither a regular file nor a directory is refused (404) before any open: opening a
// FIFO blocks until a writer comes, and it would block the loop.
func (s *FS) open(name string) (fs.File, fs.FileInfo, int) {
	if sfs, ok := s.fsys.(fs.StatFS); ok && !s.fixed {
		fi, err := sfs.Stat(name)
		if err != nil {
			return nil, nil, statusFor(err)
		}
		if !fi.Mode().IsRegular() && !fi.IsDir() {
			return nil, nil, 404
		}
	}
	f, err := s.fsys.Open(name)
	if err != nil {
		return nil, nil, statusFor(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, 500
	}
	return f, fi, 0
}

// fsName turns a request's name into a name of the FS: as cleanName does, without a copy when
// the name is already clean, as it is on the common path.
func fsName(name string) (string, bool) {
	rel := strings.TrimPrefix(name, "/")
	switch {
	case rel == "":
		return ".", true
	case fs.ValidPath(rel) && strings.IndexByte(rel, '\\') < 0 && strings.IndexByte(rel, 0) < 0:
		return rel, true
	}
	return cleanName(name)
}

// readerAt returns f as an io.ReaderAt for copyAt: f itself when it is one (the files of
// embed.FS, fstest.MapFS and os.DirFS are), else a reader of f from its start.
func readerAt(f fs.File) io.ReaderAt {
	if ra, ok := f.(io.ReaderAt); ok {
		return ra
	}
	return &forwardReader{r: f}
}

// errBackwards is a forwardReader asked for bytes it has passed; copyAt never asks.
var errBackwards = errors.New("dwell: a forward-only file read backwards")

// A forwardReader reads a file that can neither seek nor read at an offset (an entry of a zip
// archive) for copyAt, which asks for increasing offsets from the one it starts at: the bytes
// before that one are read and dropped.
type forwardReader struct {
	r   io.Reader
	pos int64
}

func (f *forwardReader) ReadAt(p []byte, off int64) (int, error) {
	if off < f.pos {
		return 0, errBackwards
	}
	if off > f.pos {
		n, err := io.CopyN(io.Discard, f.r, off-f.pos)
		f.pos += n
		if err != nil {
			return 0, err
		}
	}
	n, err := io.ReadFull(f.r, p)
	f.pos += int64(n)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}
