//go:build race

package bufpool

// In builds with the race detector (make test runs them), a request's memory is never reused,
// and is overwritten with a poison pattern when the request ends. Everything runs on the loop's
// goroutine, so the detector itself cannot see a borrowed value (a XxxBytes slice) kept past
// its request; with the poison, such a value reads as "dwell:freed dwell:freed ..." in the first
// test that looks at it, rather than as another request's bytes in production.

// Poison is the pattern an ended request's memory is overwritten with.
const Poison = "dwell:freed "

// GetArena returns a fresh buffer for a request head of n bytes, never a recycled one.
func GetArena(_ *Pool, n int) []byte { return make([]byte, 0, n) }

// PutArena poisons a request's arena once the request has ended, and leaves it to the
// collector: nothing reuses it.
func PutArena(_ *Pool, b []byte) {
	b = b[:cap(b)]
	for i := range b {
		b[i] = Poison[i%len(Poison)]
	}
}
