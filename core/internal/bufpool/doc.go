// Package bufpool recycles the byte buffers of dwell's loops — request heads, spill buffers,
// output chunks — by size class, one Pool per loop, with no locks. GetArena and PutArena take
// and give back the arena of a request head: in builds with the race detector, an arena is
// never reused and is poisoned when its request ends (see arena_race.go).
package bufpool
