//go:build !dwell_nostats

package engine

// countStats says whether the transports count bytes and handshakes (Counts): always, but in a
// build with the dwell_nostats tag, as in package core.
const countStats = true
