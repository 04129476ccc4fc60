// Package servetest holds what the tests of dwell's protocol packages (core/internal/http1 and
// core/internal/http2) share: a server started for the length of a test (Start), and the
// Protocols the hand-over tests give a connection or a stream (Echo, Lines, Panicky). Only
// tests import it.
package servetest
