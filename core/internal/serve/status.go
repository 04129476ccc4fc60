package serve

import "github.com/dwellhttp/dwell/core/internal/wire"

// StatusText returns the reason phrase of an HTTP status code (RFC 9110 §15), or "" when the
// code has none registered.
func StatusText(code int) string { return wire.StatusText(code) }
