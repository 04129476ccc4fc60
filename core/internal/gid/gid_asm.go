//go:build !wasm

package gid

// Self returns the identity of the calling goroutine: never 0, and different for any two
// goroutines alive at the same time.
//
//go:noescape
func Self() uintptr
