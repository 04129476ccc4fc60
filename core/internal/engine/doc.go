// Package engine holds what a loop keeps for its connections' bytes and deadlines, knowing
// nothing of HTTP: the timer heap and the write queue, each a plain data structure of the loop's
// (no locks: one loop touches them), tested alone. Package core's loops and connections are
// built on it, and the protocols above them (HTTP/1.1, HTTP/2, what follows a hand-over) reach
// it only through core.
package engine
