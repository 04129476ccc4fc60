// Package bufpool is dwell's one buffer pool: byte buffers by size class — the Go allocator's
// classes up to 2 KiB, powers of two above — kept in two ways. A Pool is a loop's own, used by
// its goroutine alone and so without locks: request heads, spill buffers, output chunks. Get
// and Put are the shared pool, for any goroutine: WebSocket messages gathered whole, the net/http
// bridge's buffers, body copies. GetArena and PutArena take and give back the arena of a request
// head. In builds with the race detector nothing is reused: a buffer given back is poisoned
// with "dwell:freed " (Poison), so that a slice kept past its lender reads as that in the first
// test that looks at it (race.go).
package bufpool
