package body

import (
	"os"
	"syscall"
	"time"
)

// A fileID is what identifies a regular file and its state: if a path's fileID is the one an
// open file had, the path still names that file and nothing about it has changed (the change
// time moves with every write and every change to its inode).
type fileID struct {
	dev, ino     uint64
	ctime, mtime syscall.Timespec
	size         int64
}

// statID returns the fileID of the regular file at path; false for anything else, or when
// path cannot be stated.
func statID(path string) (fileID, bool) {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return fileID{}, false
	}
	return idFromStat(&st)
}

// idOf returns the fileID of an opened file from its FileInfo.
func idOf(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return idFromStat(st)
}

func idFromStat(st *syscall.Stat_t) (fileID, bool) {
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return fileID{}, false
	}
	return fileID{
		dev: uint64(st.Dev), ino: uint64(st.Ino), ctime: st.Ctim, mtime: st.Mtim, size: st.Size,
	}, true
}

func (id fileID) modtime() time.Time { return time.Unix(id.mtime.Unix()) }
