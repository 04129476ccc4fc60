package interop

import "syscall"

// childAttr has a server the tests start killed with the test process, should that end
// without its cleanups (a timeout's panic): Linux's parent-death signal.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
