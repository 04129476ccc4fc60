// Package interop tests dwell with the net/http libraries people bring along, through the
// net/http bridge (package nethttp): gorilla/websocket's Upgrader and coder/websocket's Accept
// hijack the connection, and must work on dwell unchanged. It is a module of its own so that
// dwell's main module keeps its few dependencies; it holds tests only.
package interop
