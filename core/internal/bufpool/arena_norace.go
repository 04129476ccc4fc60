//go:build !race

package bufpool

// GetArena returns an empty buffer for a request head of n bytes with its table and scratch:
// from the loop's pool, like every other buffer.
func GetArena(pool *Pool, n int) []byte { return pool.Get(n) }

// PutArena recycles a request's arena once the request has ended: its borrowed values end here.
func PutArena(pool *Pool, b []byte) { pool.Put(b) }
