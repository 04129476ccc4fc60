//go:build race

package websocket

// In builds with the race detector (make test runs them), a message buffer is never reused: it
// is overwritten with a poison pattern when it goes back, so that a message kept past the call
// that lent it (Events.Message's data) reads as "dwell:freed dwell:freed ..." in the first test
// that looks at it, rather than as another message in production.

const poisonBuffers = true

const poisonPattern = "dwell:freed "

func poison(b []byte) {
	for i := range b {
		b[i] = poisonPattern[i%len(poisonPattern)]
	}
}
