package netpoll

import "os"

// Error turns an error number into an error naming the call, for the rare paths that report
// one.
func Error(call string, e Errno) error {
	return os.NewSyscallError(call, e)
}
