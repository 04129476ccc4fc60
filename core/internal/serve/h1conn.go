package serve

import "github.com/dwellhttp/dwell/internal/alias"

// An h1conn is a Socket as HTTP/1.1 serves it: the exchange of its requests, one after another.
// It is the Socket itself, seen through HTTP/1.1's methods (h1).
type h1conn struct{ Socket }

// h1 is c as HTTP/1.1's connection.
func h1(c *Socket) *h1conn { return alias.Outer[h1conn](c) }
