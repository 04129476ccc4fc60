//go:build !race

package bufpool

const raceBuild = false

// GetArena returns an empty buffer for a request head of n bytes with its table and scratch:
// from the loop's pool, like every other buffer.
func GetArena(pool *Pool, n int) []byte { return pool.Get(n) }

// PutArena recycles a request's arena once the request has ended: its borrowed values end here.
func PutArena(pool *Pool, b []byte) { pool.Put(b) }

// Poison does nothing: only builds with the race detector poison what is given back.
func Poison([]byte) {}
