package body

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"io/fs"
	"path"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/bufpool"
	"github.com/dwellhttp/dwell/wait"
)

// What an FS finds out about a name on its first request — a directory or a file, the file's
// type and validators (a content hash where the FS keeps no modification times), which
// precompressed siblings it has — is kept in an fsEntry for the requests after it, so that
// none of them sniffs, hashes or looks for siblings again.

// A coding is a content coding in which an FS may send a file.
type coding uint8

const (
	identity coding = iota // the file itself
	brotli
	gzipped
	numCodings
)

// codings gives each coding's Content-Encoding name and the suffix of its sibling file.
var codings = [numCodings]struct{ name, ext string }{
	identity: {"", ""},
	brotli:   {"br", ".br"},
	gzipped:  {"gzip", ".gz"},
}

// maxFSEntries bounds what an FS keeps: a site's assets fit, a request for every name of a
// large tree does not make it grow without end.
const maxFSEntries = 1024

// hashOnWorker is the size past which a file is hashed on a wait.Do worker: a large file would
// otherwise stall every connection of the loop while it is read (from a disk, for an FS that
// has one); a small one costs less to hash than to hand over.
const hashOnWorker = 64 << 10

// An fsEntry describes one name of an FS: a directory, or a regular file and its siblings.
type fsEntry struct {
	name  string // the name in the FS, owned
	dir   bool
	index string // a directory's index.html
	ctype string // the file's type, which its compressed siblings share
	vary  bool   // it has a sibling: what is sent depends on Accept-Encoding

	// reps[identity] is the file itself; a sibling has an empty name when there is none.
	reps [numCodings]fsRep
}

// An fsRep is one representation of a file: the file itself or a compressed sibling.
type fsRep struct {
	name               string
	size               int64
	modtime            time.Time // zero when the FS gives none
	lastModified, etag string

	// at is the file, kept open, on an FS whose files never change; nil elsewhere, where each
	// request opens the file.
	at io.ReaderAt
}

// available reports which codings the file has.
func (e *fsEntry) available() (a [numCodings]bool) {
	for k := range e.reps {
		a[k] = e.reps[k].name != ""
	}
	return a
}

// same reports whether fi still describes the file r describes: what an FS that may change is
// checked by on each request.
func (r *fsRep) same(fi fs.FileInfo) bool {
	return fi.Mode().IsRegular() && fi.Size() == r.size && fi.ModTime().Equal(r.modtime)
}

// describe describes f, the file name opened and stat'ed as fi, and its siblings. It returns
// the entry and, when the caller is to send f, f itself; otherwise f has been closed (a
// directory, a failure) or kept in the entry (an FS whose files never change).
func (s *FS) describe(c *core.Ctx, name string, f fs.File, fi fs.FileInfo) (*fsEntry, fs.File, int) {
	switch {
	case fi.IsDir():
		f.Close()
		return &fsEntry{name: name, dir: true, index: path.Join(name, indexName)}, nil, 0
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, nil, 404
	}
	e := &fsEntry{name: name, ctype: typeByName(name)}
	var head []byte
	if e.ctype == "" {
		head = make([]byte, min(int64(sniffLen), fi.Size()))
	}
	if err := s.describeRep(c, &e.reps[identity], identity, name, f, fi, head); err != nil {
		f.Close()
		return nil, nil, 500
	}
	if e.ctype == "" {
		e.ctype = sniff(head)
	}
	for k := brotli; k < numCodings; k++ {
		r := &e.reps[k]
		sibling := name + codings[k].ext
		g, gi, _ := s.open(sibling)
		switch {
		case g == nil:
			continue // any failure to open a sibling means there is none to send
		case !gi.Mode().IsRegular() || s.describeRep(c, r, k, sibling, g, gi, nil) != nil:
			*r = fsRep{}
			g.Close()
			continue
		case r.at == nil:
			g.Close() // opened again when sent
		}
		e.vary = true
	}
	if e.reps[identity].at != nil {
		f = nil
	}
	return e, f, 0
}

// describeRep fills r for f, the file name of coding k stat'ed as fi, reading f's first
// len(head) bytes into head. Validators come from the modification time and size where the FS
// gives a time, else from a hash of the content; a sibling's ETag ends in its coding's name.
func (s *FS) describeRep(c *core.Ctx, r *fsRep, k coding, name string, f fs.File, fi fs.FileInfo, head []byte) error {
	r.name, r.size, r.modtime = name, fi.Size(), fi.ModTime()
	hash := !knownTime(r.modtime)
	if hash || len(head) > 0 {
		sum, err := s.readContent(c, name, f, r.size, head, hash)
		if err != nil {
			return err
		}
		if hash {
			r.etag = hashETag(sum)
		}
	}
	if !hash {
		r.lastModified = formatTime(r.modtime.Truncate(time.Second))
		r.etag = makeETag(r.modtime, r.size)
	}
	if k != identity {
		r.etag = r.etag[:len(r.etag)-1] + "-" + codings[k].name + `"`
	}
	if ra, ok := f.(io.ReaderAt); ok && s.fixed {
		r.at = ra
	}
	return nil
}

// readContent reads the first len(head) bytes of f, the file name of size bytes, into head
// and, if hash is set, returns the SHA-256 of all size bytes. It reads f at offsets, leaving it
// where a request sends it from; a file that cannot be read so is read from a second open of
// its name. A large file is hashed on a wait.Do worker, the handler parked meanwhile.
func (s *FS) readContent(c *core.Ctx, name string, f fs.File, size int64, head []byte, hash bool) ([]byte, error) {
	var src io.Reader
	if ra, ok := f.(io.ReaderAt); ok {
		src = io.NewSectionReader(ra, 0, size)
	} else {
		g, err := s.fsys.Open(name)
		if err != nil {
			return nil, err
		}
		defer g.Close()
		src = io.LimitReader(g, size)
	}
	var sum []byte
	var err error
	read := func() {
		var n int
		if n, err = io.ReadFull(src, head); err != nil || !hash {
			return // a file shorter than it was stat'ed changed meanwhile: an error
		}
		h := sha256.New()
		h.Write(head[:n])
		bp := bufpool.Get(copySize)[:copySize]
		defer bufpool.Put(bp)
		if _, err = io.CopyBuffer(h, src, bp[:]); err == nil {
			sum = h.Sum(nil)
		}
	}
	ran := false
	if hash && size > hashOnWorker {
		// Do runs read to its end whatever it returns, unless it returns before running it
		// (Serve called from outside a handler): read then runs here.
		wait.Do(c, func() { ran = true; read() })
	}
	if !ran {
		read()
	}
	return sum, err
}

// hashETag formats a strong ETag from a content hash: 128 bits of it, which no two contents an
// FS holds share by chance.
func hashETag(sum []byte) string {
	b := make([]byte, 0, 24)
	b = append(b, '"')
	b = base64.RawURLEncoding.AppendEncode(b, sum[:16])
	b = append(b, '"')
	return string(b)
}

// store keeps e, forgetting another entry when the FS keeps maxFSEntries already: whichever a
// map iteration meets first, which Go makes arbitrary. A forgotten entry holds nothing that
// needs closing (the files an FS keeps open are an embed.FS's, which hold no descriptor).
func (s *FS) store(e *fsEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.entries[e.name]; !ok && len(s.entries) >= maxFSEntries {
		for name := range s.entries {
			delete(s.entries, name)
			break
		}
	}
	s.entries[e.name] = e
}

// drop forgets e, if it is still the entry for its name: a request found its file changed.
func (s *FS) drop(e *fsEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries[e.name] == e {
		delete(s.entries, e.name)
	}
}
