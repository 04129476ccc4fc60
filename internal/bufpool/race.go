//go:build race

package bufpool

// In builds with the race detector (make test runs them), no buffer is reused: what is given back
// is overwritten with a poison pattern and left to the collector. Everything of a request runs on
// the loop's goroutine, so the detector itself cannot see a borrowed value (a slice of a Ctx's
// Bytes view, a WebSocket message lent to Events.Message) kept past its lender; with the poison,
// such a value reads as "dwell:freed dwell:freed ..." in the first test that looks at it, rather
// than as another request's bytes in production.

const raceBuild = true

// GetArena returns a fresh buffer for a request head of n bytes, never a recycled one.
func GetArena(_ *Pool, n int) []byte { return make([]byte, 0, n) }

// PutArena poisons a request's arena once the request has ended, and leaves it to the
// collector: nothing reuses it.
func PutArena(_ *Pool, b []byte) { Poison(b[:cap(b)]) }

// Poison overwrites b with PoisonPattern: for memory lent for a call and reused after it, such
// as a loop's read buffer lent to a WebSocket's Events.Message.
func Poison(b []byte) {
	for i := range b {
		b[i] = PoisonPattern[i%len(PoisonPattern)]
	}
}
