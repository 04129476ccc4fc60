package websocket

import (
	"sync"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/websocket/internal/deflate"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// A PreparedMessage is a message framed once for any number of connections: sent to each with
// SendPrepared (or a Group's Broadcast), it costs each connection a copy of its bytes into the
// output and nothing else. For connections that compress without context takeover it is
// compressed once, the first time one of them needs it; a connection with context takeover
// compresses it on its own, since its compressor's window is its own.
// A PreparedMessage is immutable and safe for use by any number of goroutines.
type PreparedMessage struct {
	plain []byte // the frame, header and payload
	data  []byte // the payload, within plain

	once     sync.Once
	deflated []byte // the compressed frame, made by the first connection that needs it
}

// NewPreparedMessage frames a message of type typ (Text or Binary) with a copy of data.
func NewPreparedMessage(typ MessageType, data []byte) *PreparedMessage {
	if typ != Text && typ != Binary {
		panic(errBadType)
	}
	b := make([]byte, 0, frame.MaxHeaderSize+len(data))
	b = frame.AppendHeader(b, frame.Header{Fin: true, Opcode: frame.Opcode(typ), Length: int64(len(data))})
	h := len(b)
	b = append(b, data...)
	return &PreparedMessage{plain: b, data: b[h:]}
}

// typ returns the message's type, from its frame's first byte.
func (pm *PreparedMessage) typ() MessageType { return MessageType(pm.plain[0] & 0x0f) }

// compressedFrame returns the frame compressed without context takeover, making it once.
func (pm *PreparedMessage) compressedFrame() []byte {
	pm.once.Do(func() {
		var comp deflate.Compressor // the zero value: no context takeover, a 32 KiB window
		z := comp.Compress(nil, pm.data)
		b := make([]byte, 0, frame.MaxHeaderSize+len(z))
		b = frame.AppendHeader(b, frame.Header{Fin: true, RSV1: true, Opcode: frame.Opcode(pm.typ()), Length: int64(len(z))})
		pm.deflated = append(b, z...)
	})
	return pm.deflated
}

// SendPrepared sends a prepared message, as Send sends a message: at once, never waiting, the
// slow-client policy applied, its result what Send's would be. Goroutines use the Remote's.
func (c *Conn) SendPrepared(pm *PreparedMessage) SendResult {
	c.hc.MustBeOnLoop("websocket.Conn.SendPrepared", goroutinesUseRemote)
	return c.sendPrepared(pm)
}

func (c *Conn) sendPrepared(pm *PreparedMessage) SendResult {
	if c.state != stateOpen {
		return SendClosed
	}
	f := pm.plain
	if c.flate != nil && len(pm.data) >= c.o.compressMin() {
		if !c.flate.shared {
			return c.send(pm.typ(), pm.data, true)
		}
		f = pm.compressedFrame()
	}
	if c.hc.Buffered()+len(f) > c.o.maxQueued() {
		if c.o.SlowClient == CloseSlowClient {
			c.dropSlow()
		}
		return SendDropped
	}
	c.hc.Write(f)
	return c.queued()
}

// A Group is a set of connections that messages are broadcast to, spread over any number of
// loops: a broadcast posts one task to each loop that has members, which sends the message,
// framed and compressed once, to each of them there. Connections leave a group when they close
// (or with Remove). The zero value is an empty group; its methods may be called from any
// goroutine.
type Group struct {
	mu    sync.Mutex
	loops []*groupLoop
}

// A groupLoop is the members of a group on one loop: its conns are touched by that loop alone.
type groupLoop struct {
	loop  *core.Loop
	conns []*Conn
}

// on returns the group's members on loop l, making the list the first time.
func (g *Group) on(l *core.Loop) *groupLoop {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, gl := range g.loops {
		if gl.loop == l {
			return gl
		}
	}
	gl := &groupLoop{loop: l}
	g.loops = append(g.loops, gl)
	return gl
}

// Add adds c to the group. Broadcasts that begin after Add returns reach it.
func (g *Group) Add(c *Conn) {
	gl := g.on(c.Loop())
	c.Loop().Post(func() { // a stopped loop has closed the connection: nothing is left to do
		if c.state == stateOpen {
			gl.conns = append(gl.conns, c)
		}
	})
}

// Remove takes c out of the group; a closed connection leaves by itself.
func (g *Group) Remove(c *Conn) {
	gl := g.on(c.Loop())
	c.Loop().Post(func() {
		for i, m := range gl.conns {
			if m == c {
				gl.remove(i)
				return
			}
		}
	})
}

// remove takes the member at i out, the last one taking its place.
func (gl *groupLoop) remove(i int) {
	last := len(gl.conns) - 1
	gl.conns[i] = gl.conns[last]
	gl.conns[last] = nil
	gl.conns = gl.conns[:last]
}

// Broadcast sends pm to every member, as SendPrepared does, and returns at once: each loop
// sends it to its members in a task of its own, and a member too slow for it meets its
// slow-client policy there (Options.SlowClient), the others unaffected. Messages broadcast by
// one goroutine reach each member in the order they were broadcast.
func (g *Group) Broadcast(pm *PreparedMessage) {
	g.mu.Lock()
	loops := g.loops
	g.mu.Unlock()
	for _, gl := range loops {
		gl.loop.Post(func() { gl.send(pm) })
	}
}

// send sends pm to the loop's members, dropping those that have closed.
func (gl *groupLoop) send(pm *PreparedMessage) {
	for i := 0; i < len(gl.conns); {
		c := gl.conns[i]
		if c.state != stateOpen {
			gl.remove(i)
			continue
		}
		c.sendPrepared(pm)
		i++
	}
}
