package body

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/dwellhttp/dwell/core"
)

// indexName is the file served for a directory. Directories are never listed: one without it
// is answered 404.
const indexName = "index.html"

// ServeFile answers the request with the file at path, a file-system path, as ServeContent
// does, sending it with sendfile(2). A missing file is answered 404, an unreadable one 403.
// A directory is served as its index.html (404 without one); requested without a trailing
// slash, it is redirected (301) to the path with one, so that relative links in the page
// resolve inside the directory. Anything but a regular file or directory (a FIFO, a device) is
// answered 404.
//
// ServeFile and ServeRoot keep up to 64 recently served files open, so that serving one again
// costs a stat(2) of its path rather than opening it: the path is still checked on every
// request, and a file that was changed, replaced, deleted or made unreadable since is opened
// afresh (or answered 404 or 403) at once; a file not served for 10 seconds is closed within
// the next 10. (On systems other than Linux, every request opens its file.)
//
// path is trusted: build it from request data only with ServeRoot, which keeps it inside a
// directory. As a precaution, a request whose path has a ".." segment is refused with 400.
func ServeFile(c *core.Ctx, path string) {
	if hasDotDot(c.Bytes().Path()) {
		fail(c, 400)
		return
	}
	name := filepath.Base(path)
	if openFiles.serve(c, path, path, name) {
		return
	}
	f, err := openNonblock(func(flag int) (*os.File, error) { return os.OpenFile(path, flag, 0) })
	if err != nil {
		fail(c, statusFor(err))
		return
	}
	serveOpened(c, f, name, path, func(flag int) (*os.File, error) {
		return os.OpenFile(filepath.Join(path, indexName), flag, 0)
	})
}

// ServeRoot answers the request with the file name inside the directory root, as ServeFile
// does. name is slash-separated and already percent-decoded, as core.Ctx.Path and route
// parameters are; a leading slash is optional, and a trailing one names a directory only (a
// file asked for as "page.html/" is 404, as nginx answers it).
//
// Nothing outside root is ever served. A name with a ".." segment, a backslash or a NUL byte is
// refused with 400 — percent-encoded forms such as %2e%2e and %2f arrive decoded and are
// refused the same way, while a doubly encoded %252e arrives as the literal file name "%2e".
// The file is then opened through os.Root, which refuses any path that leaves root, symbolic
// links included (404).
func ServeRoot(c *core.Ctx, root, name string) {
	rel, ok := cleanName(name)
	if !ok {
		fail(c, 400)
		return
	}
	dirOnly := namesDir(name, rel)
	// A file kept open was opened through os.Root, and is served again only while the joined
	// path names that very file: whatever the path now passes through, it leads to a file the
	// root let out.
	key := root + "\x00" + rel
	if !dirOnly && openFiles.serve(c, key, filepath.Join(root, filepath.FromSlash(rel)), rel) {
		return
	}
	rt, err := os.OpenRoot(root)
	if err != nil {
		fail(c, 500) // the server's configuration, not the request, is at fault
		return
	}
	defer rt.Close()
	f, err := openNonblock(func(flag int) (*os.File, error) { return rt.OpenFile(rel, flag, 0) })
	if err != nil {
		fail(c, statusFor(err))
		return
	}
	if dirOnly {
		if fi, err := f.Stat(); err == nil && !fi.IsDir() {
			f.Close()
			fail(c, 404) // "page.html/": no directory by that name
			return
		}
	}
	serveOpened(c, f, rel, key, func(flag int) (*os.File, error) {
		return rt.OpenFile(path.Join(rel, indexName), flag, 0)
	})
}

// openNonblock opens a file for reading with O_NONBLOCK: opening a FIFO would otherwise block
// the loop until a writer came. Regular files ignore the flag.
func openNonblock(open func(flag int) (*os.File, error)) (*os.File, error) {
	return open(os.O_RDONLY | openNonblockFlag)
}

// serveOpened serves the opened file f (named name, for its type), or, for a directory, the
// index that openIndex opens. It takes f over: a regular file goes into openFiles under key,
// anything else is closed once served.
func serveOpened(c *core.Ctx, f *os.File, name, key string, openIndex func(flag int) (*os.File, error)) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		switch {
		case err != nil:
			fail(c, 500)
		case fi.IsDir():
			serveIndex(c, openIndex)
		default:
			fail(c, 404)
		}
		return
	}
	if e := openFiles.keep(key, f, fi); e != nil {
		defer openFiles.release(e)
	} else {
		defer f.Close()
	}
	serve(c, resource{name: name, modtime: fi.ModTime(), size: fi.Size(), content: f, file: f})
}

// serveIndex serves a directory's index, opened by openIndex, or redirects a request for the
// directory without its trailing slash.
func serveIndex(c *core.Ctx, openIndex func(flag int) (*os.File, error)) {
	idx, err := openNonblock(openIndex)
	if err != nil {
		fail(c, statusFor(err))
		return
	}
	defer idx.Close()
	if !strings.HasSuffix(c.Path(), "/") {
		redirectToDir(c)
		return
	}
	fi, err := idx.Stat()
	switch {
	case err != nil:
		fail(c, 500)
	case !fi.Mode().IsRegular():
		fail(c, 404)
	default:
		serve(c, resource{name: indexName, modtime: fi.ModTime(), size: fi.Size(), content: idx, file: idx})
	}
}

// redirectToDir sends the client to the request's path with a trailing slash, as a relative
// reference (RFC 3986 §4.2) so that it holds whatever prefix a router matched. A name with a
// colon is preceded by "./", or it would read as a scheme ("a:b/").
func redirectToDir(c *core.Ctx) {
	loc := url.PathEscape(path.Base(c.Path())) + "/"
	if strings.Contains(loc, ":") {
		loc = "./" + loc
	}
	if q := c.RawQuery(); q != "" {
		loc += "?" + q
	}
	c.SetHeader("Location", loc)
	fail(c, 301)
}

// namesDir reports whether name, cleaned to rel, can name only a directory: it ends with a
// slash (the root aside). A file asked for so is not served — as a file system refuses
// "page.html/" — since the page's relative links would resolve under a directory that is not
// there.
func namesDir(name, rel string) bool { return rel != "." && strings.HasSuffix(name, "/") }

// cleanName turns a decoded URL path into a name relative to a root, refusing the names that
// could mean something else on some system: ".." segments (checked before cleaning, which would
// otherwise resolve them quietly), backslashes (a separator on Windows) and NUL (which ends a
// path in system calls).
func cleanName(name string) (string, bool) {
	if strings.ContainsAny(name, "\\\x00") || hasDotDot(name) {
		return "", false
	}
	rel := path.Clean("/" + name)[1:]
	if rel == "" {
		rel = "."
	}
	return rel, true
}

// hasDotDot reports whether a slash-separated path has a ".." segment.
func hasDotDot[P string | []byte](p P) bool {
	start := 0 // where the current segment starts
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			if i-start == 2 && p[start] == '.' && p[start+1] == '.' {
				return true
			}
			start = i + 1
		}
	}
	return false
}

// statusFor maps an error opening a file to a status: 404 for what is not there (or not
// reachable: a path through a file, a symlink loop, a name too long, an escape from the root),
// 403 for what may not be read, 500 for failures of the system.
func statusFor(err error) int {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 404
	case errors.Is(err, fs.ErrPermission):
		return 403
	}
	return errnoStatus(err)
}
