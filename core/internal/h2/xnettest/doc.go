// Package xnettest checks dwell's HPACK (core/internal/h2) against golang.org/x/net's, in a
// module of its own so that the main module does not depend on x/net for it.
package xnettest
