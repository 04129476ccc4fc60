// Package serve is what package core's types are: the server, its loops and connections,
// HTTP/1.1 and HTTP/2, the Ctx and its hooks, the connections handed over to protocols. core is
// its public face — the same names, documented there, each a thin call into this package — so
// that the protocols can become packages of their own between the two, using what this package
// exports for them, which is no part of dwell's API.
package serve
