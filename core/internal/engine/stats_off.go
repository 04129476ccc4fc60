//go:build dwell_nostats

package engine

// countStats is false in a build with the dwell_nostats tag: the transports count nothing.
const countStats = false
