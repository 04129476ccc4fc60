//go:build dwell_nostats

package serve

// CountStats is false in a build with the dwell_nostats tag: the loops count nothing, and
// Server.Stats reports the connections' states alone. The benchmarks build it to measure what
// counting costs; nothing else should.
const CountStats = false
