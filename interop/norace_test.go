//go:build !race

package interop

// raceEnabled says that the tests run under the race detector (see race_test.go).
const raceEnabled = false
