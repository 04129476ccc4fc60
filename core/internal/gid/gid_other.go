//go:build wasm

package gid

// Self returns the identity of the calling goroutine: never 0, and different for any two
// goroutines alive at the same time. wasm's assembler cannot read the runtime's g outside the
// runtime, so here it is the goroutine's number, read from its stack trace: exact, and slow.
func Self() uintptr { return uintptr(Number()) }
