//go:build !dwell_nostats

package serve

// CountStats says whether the loops count their statistics (Server.Stats): always, but in a
// build with the dwell_nostats tag, which the benchmarks use to measure what counting costs.
const CountStats = true
