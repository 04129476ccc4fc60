//go:build race

package interop

// raceEnabled says that the tests run under the race detector, whose goroutine stacks are larger:
// the footprint figures to quote come from a build without it.
const raceEnabled = true
