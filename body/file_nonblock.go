//go:build unix || windows

package body

import "syscall"

// openNonblockFlag opens a file without blocking on it: a FIFO or a device named by mistake
// must not stall the loop in open(2).
const openNonblockFlag = syscall.O_NONBLOCK
