package body

import (
	"os"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/core"
)

// openFiles keeps the regular files ServeFile and ServeRoot served lately open, so that serving
// one again costs a stat(2) of its path instead of an open, an fstat and a close (and the
// runtime's work of making and finalizing an *os.File). It never serves stale content: every
// request stats the path, and the open file is used only if the path still names that very
// file, unchanged since it was opened — the same device and inode and the same change time,
// which moves on every write, chmod, rename or link — so a file that was edited, replaced,
// renamed away, deleted or made unreadable is opened afresh (and answered 404 or 403) at once.
// The bytes are read from the file at the time of the request; only the descriptor is kept.
//
// At most maxOpenFiles stay open, and a file not served for openFileIdle is closed by the sweep
// that follows (so between one and two openFileIdle after its last use), so that a deleted
// file's space is not held for long.
var openFiles = fileCache{entries: make(map[string]*cachedFile)}

const maxOpenFiles = 64

var openFileIdle = 10 * time.Second // a variable for the tests; fileCache.mu guards it

// A fileCache is the set of open files, shared by every loop: a mutex guards it, and each file
// counts the requests serving it, so that none is closed while one is being sent.
type fileCache struct {
	mu       sync.Mutex
	entries  map[string]*cachedFile
	uses     uint64 // counts the uses, to find the least recently used file
	swept    uint64 // uses when the last sweep ran: a file last used before it is idle
	sweeping bool   // a sweep is scheduled
}

// A cachedFile is an open file and what it was when opened.
type cachedFile struct {
	key  string
	f    *os.File
	id   fileID
	refs int    // one per request serving the file, plus one while it is in the cache
	used uint64 // fileCache.uses at its last use

	// The validators id gives, formatted once: the entry lives only as long as id holds.
	lastModified, etag string
}

// serve answers the request with the cached file for key, found at path, and reports whether
// it did: false means the caller opens the file itself.
func (fc *fileCache) serve(c *core.Ctx, key, path, name string) bool {
	e := fc.pin(key)
	if e == nil {
		return false
	}
	defer fc.release(e)
	id, ok := statID(path)
	if !ok || id != e.id {
		fc.drop(e)
		return false
	}
	// Several requests may send the file at once: serve reads a resource's file only at
	// explicit offsets (sendfile, pread), never through its shared offset.
	serve(c, resource{name: name, modtime: id.modtime(), size: id.size, content: e.f, file: e.f,
		lastModified: e.lastModified, etag: e.etag})
	return true
}

// pin returns the cached file for key, counted as in use, or nil.
func (fc *fileCache) pin(key string) *cachedFile {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	e := fc.entries[key]
	if e != nil {
		e.refs++
		fc.uses++
		e.used = fc.uses
	}
	return e
}

// keep puts f, just opened for key and described by fi, in the cache, and returns it counted as
// in use; the cache then owns f. It returns nil, leaving f to the caller, when f cannot be
// checked against its path on this system.
func (fc *fileCache) keep(key string, f *os.File, fi os.FileInfo) *cachedFile {
	id, ok := idOf(fi)
	if !ok {
		return nil
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if old := fc.entries[key]; old != nil {
		fc.unlist(old)
	}
	if len(fc.entries) >= maxOpenFiles {
		fc.evictOldest()
	}
	fc.uses++
	e := &cachedFile{key: key, f: f, id: id, refs: 2, used: fc.uses}
	if t := id.modtime(); knownTime(t) {
		e.lastModified, e.etag = formatTime(t.Truncate(time.Second)), makeETag(t, id.size)
	}
	fc.entries[key] = e
	if !fc.sweeping {
		// A runtime timer rather than a loop's: the cache is the process's, shared by every
		// loop of every server, and must close its files even after they all stop. The sweep
		// only takes the mutex and closes descriptors, so it blocks no loop.
		fc.sweeping = true
		fc.swept = fc.uses
		time.AfterFunc(openFileIdle, fc.sweep)
	}
	return e
}

// release ends a request's use of e, closing it if the cache let it go meanwhile.
func (fc *fileCache) release(e *cachedFile) {
	fc.mu.Lock()
	e.refs--
	last := e.refs == 0
	fc.mu.Unlock()
	if last {
		e.f.Close()
	}
}

// drop takes e out of the cache if it is still there: its path names another file now.
func (fc *fileCache) drop(e *cachedFile) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.entries[e.key] == e {
		fc.unlist(e)
	}
}

// unlist takes e out of the cache, closing it unless a request is still sending it (release
// closes it then). fc.mu is held.
func (fc *fileCache) unlist(e *cachedFile) {
	delete(fc.entries, e.key)
	if e.refs--; e.refs == 0 {
		e.f.Close()
	}
}

// evictOldest makes room by letting the least recently used file go. fc.mu is held.
func (fc *fileCache) evictOldest() {
	var oldest *cachedFile
	for _, e := range fc.entries {
		if oldest == nil || e.used < oldest.used {
			oldest = e
		}
	}
	fc.unlist(oldest)
}

// sweep closes the files not used since the previous sweep, and runs again while any are left,
// on a runtime timer for the reason keep gives: it blocks no loop.
func (fc *fileCache) sweep() {
	fc.mu.Lock()
	more, d := fc.closeIdle(), openFileIdle
	fc.mu.Unlock()
	if more {
		time.AfterFunc(d, fc.sweep)
	}
}

// closeIdle closes the files not used since it last ran, and reports whether any are left; if
// none are, the next file kept schedules the next sweep. fc.mu is held.
func (fc *fileCache) closeIdle() bool {
	for _, e := range fc.entries {
		if e.used <= fc.swept {
			fc.unlist(e)
		}
	}
	fc.swept = fc.uses
	fc.sweeping = len(fc.entries) > 0
	return fc.sweeping
}
