// Package engine holds a loop's machinery, knowing nothing of HTTP: the turn (Loop.Run: poll,
// hand the events to the loop's Driver, run the timers due, the driver's own work, the TLS
// handshakes) and the clock it reads; the accepting of connections from the listening sockets;
// the timer heap; what a connection is to the engine (Conn: its descriptor, its registration
// and interest with the poller, the transport that carries its bytes, its release, and its
// unparsed input, kept between turns in a spill buffer of its own); the transports that carry a
// connection's bytes (the socket's own, and TLS: crypto/tls on the loop, its handshakes given a
// bounded share of each turn; a plain socket an io_uring poller owns is read from what the ring
// received and written by the ring's sends, which the write queue starts and completes as an
// AsyncWriter); the write queue; the inbox through which other goroutines reach
// a loop — each a plain data structure of the loop's, tested alone — a connection handed over
// to goroutines as a net.Conn (GoConn), and the stall watch with what its report reads: the
// stalled loop's stack from the goroutine profile, and the schedulers' figures that tell
// whether it waited for a CPU. Package serve's loops and connections are built on it (the
// server's loop embeds a Loop and is its Driver; its connection holds a Conn); HTTP/1.1 and
// what follows a hand-over reach it through serve, and HTTP/2 names its Timer, Sender and
// AsyncWriter besides.
package engine
