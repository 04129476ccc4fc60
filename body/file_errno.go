//go:build !plan9

package body

import (
	"errors"
	"syscall"
)

// errnoStatus maps the system's reason for failing to open a file to a status: 404 for what is
// not reachable (a path through a file, a symlink loop, a name too long, an escape from the
// root) or not a file to serve (a socket, whose open fails with ENXIO), 500 for failures of
// the system.
func errnoStatus(err error) int {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		// os.Root reports a path escaping it with an unexported error, not an errno.
		return 404
	}
	switch errno {
	case syscall.ENOTDIR, syscall.ELOOP, syscall.ENAMETOOLONG, syscall.EINVAL, syscall.ENXIO:
		return 404
	}
	return 500
}
