//go:build !linux

package interop

import "syscall"

// childAttr is nothing where Linux's parent-death signal is not: a server the tests start
// outlives a test process that ends without its cleanups.
func childAttr() *syscall.SysProcAttr { return nil }
