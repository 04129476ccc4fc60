package serve

import "github.com/dwellhttp/dwell/core/internal/engine"

// The goroutine side of a handed-over connection. A Conn is the loop's: only code the loop runs
// (the Protocol's calls, handlers, continuations, Post callbacks) may use it. What a protocol
// hands to goroutines is its Remote, whose every call reaches the Conn by posting to the loop,
// and which any goroutine may hold: a WebSocket's calls from goroutines, and the net.Conn of a
// connection handed over to goroutines (Ctx.HandOverConn, handoverconn.go), are built on it.

// A Remote is the goroutine side of a handed-over connection: Do runs code on its loop with its
// Conn and waits for it, and WaitDrained waits while the connection's output is past its
// high-water mark, as a write from a goroutine should before it writes more. Posts run in the
// order they were made, so what one goroutine asks is done in its order. Its methods are for
// goroutines of the application's: code that runs on a loop, which cannot wait, has the Conn.
type Remote struct {
	hc *Conn // the loop's: used only in what runs on the loop
	l  *Loop
	st engine.RemoteState // what the goroutines see of the connection: its output's state, its close
}

// remoteOnLoop is what a Remote's call on its connection's loop panics with, after its name.
const remoteOnLoop = "a Remote is for goroutines, and code of the connection's loop uses the Conn"

// Remote returns the goroutine side of hc, the same one each time. Call it on hc's loop.
func (hc *Conn) Remote() *Remote {
	hc.alive("Remote")
	if hc.remote == nil {
		r := &Remote{hc: hc, l: hc.base().Loop}
		r.st.Init(hc.Is(hcOver), hc.Is(hcClosed))
		hc.remote = r
	}
	return hc.remote
}

// Do runs f with the connection's Conn on its loop, after what was posted to the loop before,
// and waits for it to have run. It returns ErrClosed, without running f, once the connection
// has closed. Code that runs on a loop must not call it (it panics there): it would wait for
// itself, or hold up its own loop; it uses the Conn, or posts (Loop.Post).
func (r *Remote) Do(f func(hc *Conn)) error {
	r.l.mustBeOffLoop("Remote.Do", remoteOnLoop)
	ran := make(chan bool, 1)
	if r.l.Post(func() {
		if r.hc.Is(hcClosed) {
			ran <- false
			return
		}
		f(r.hc)
		ran <- true
	}) != nil || !<-ran {
		return ErrClosed // a loop that has stopped has closed its connections
	}
	return nil
}

// Post runs f on the connection's loop, after what was posted to the loop before, without
// waiting for it: f reaches the connection through what its protocol keeps (the Conn it was
// handed, its own state). f runs even once the connection has closed (the Conn's methods then
// report it, Write refusing), so that a protocol can still answer its goroutines from what it
// kept. It returns ErrShutdown, without running f, when the loop has stopped. Code that runs on
// the connection's loop must not call it (it panics there): it has the Conn. f is posted as it
// is, so a post costs what f's closure costs and nothing more.
func (r *Remote) Post(f func()) error {
	r.l.mustBeOffLoop("Remote.Post", remoteOnLoop)
	return r.l.Post(f)
}

// WaitDrained waits while the connection's output is past its high-water mark, until the client
// has taken enough of it (Protocol.Drained) or the connection closes; it returns nil, or once
// closed ErrClosed. Code that runs on a loop must not call it (it panics there).
func (r *Remote) WaitDrained() error {
	r.l.mustBeOffLoop("Remote.WaitDrained", remoteOnLoop)
	if !r.st.WaitDrained() {
		return ErrClosed
	}
	return nil
}
