//go:build race

package bufpool

// In builds with the race detector (make test runs them), no buffer is reused: what is given back
// is overwritten with a poison pattern and left to the collector. Everything of a request runs on
// the loop's goroutine, so the detector itself cannot see a borrowed value (a slice of a Ctx's
// Bytes view, a WebSocket message lent to Events.Message) kept past its lender; with the poison,
// such a value reads as "dwell:freed dwell:freed ..." in the first test that looks at it, rather
// than as another request's bytes in production.

const raceBuild = true
