//go:build !amd64 && !arm64 && race

package gid

// Exact reports whether Self tells every two live goroutines apart in this build.
const Exact = true

// Self returns the identity of the calling goroutine: never 0, and different for any two
// goroutines alive at the same time. Here it is the goroutine's number.
func Self() uintptr { return uintptr(Number()) }
