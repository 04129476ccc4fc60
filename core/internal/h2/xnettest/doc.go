// Package xnettest checks dwell's HTTP/2 against golang.org/x/net's, in a module of its own so
// that the main module does not depend on x/net for it: its HPACK decoder (core/internal/h2)
// against x/net's encoder, and whole connections of dwell's server driven by frame sequences
// whose field blocks x/net's encoder writes (FuzzConn).
package xnettest
