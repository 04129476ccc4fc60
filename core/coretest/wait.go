package coretest

import (
	"testing"

	"github.com/dwellhttp/dwell/internal/testclient"
)

// Patience is how long the helpers wait for something that must happen (a response, a
// connection closing, a condition coming true) before they fail the test. It is long because it
// only runs out on a hang: on a small, loaded machine a request that takes microseconds may take
// a second, and a test that waits for what it expects, rather than for a time, must not fail
// then.
const Patience = testclient.Patience

// WaitFor polls cond until it holds, and fails the test, saying what it waited for, when it
// still does not after Patience. It is for a state that no channel announces: a count of parked
// requests, a file removed, a listener closed. It sleeps between polls on the test's own
// goroutine, never a loop's (a handler must not call it).
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testclient.WaitFor(t, what, cond)
}

// Receive returns the next value sent on ch, and fails the test, saying what it waited for, when
// none has come after Patience.
func Receive[T any](t testing.TB, what string, ch <-chan T) T {
	t.Helper()
	return testclient.Receive(t, what, ch)
}

// A LogBuffer collects what a logger (or a process's output) writes, for a test to read while
// others write to it: give it to slog.NewTextHandler, and read it with String.
type LogBuffer = testclient.LogBuffer
