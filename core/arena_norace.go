//go:build !race

package core

// getArena returns an empty buffer for a request head of n bytes with its table and scratch:
// from the loop's pool, like every other buffer.
func getArena(pool *bufPool, n int) []byte { return pool.get(n) }

// putArena recycles a request's arena once the request has ended: its borrowed values end here.
func putArena(pool *bufPool, b []byte) { pool.put(b) }
