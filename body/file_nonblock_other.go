//go:build !(unix || windows)

package body

// openNonblockFlag: this system has no non-blocking open.
const openNonblockFlag = 0
