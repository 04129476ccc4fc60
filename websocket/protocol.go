package websocket

import "github.com/dwellhttp/dwell/core"

// protocol is a Conn as the core.Protocol of its handed-over connection: the calls its loop
// makes (the client's bytes, the output drained, the deadline, the shutdown, the end), kept off
// Conn's own methods, which are the application's.
type protocol Conn

func (p *protocol) Receive(hc *core.Conn, in []byte) int { return (*Conn)(p).receive(hc, in) }
func (p *protocol) Drained(*core.Conn)                   { (*Conn)(p).drained() }
func (p *protocol) Timeout(*core.Conn)                   { (*Conn)(p).timeout() }
func (p *protocol) Shutdown(*core.Conn)                  { (*Conn)(p).shutdown() }
func (p *protocol) Closed(_ *core.Conn, err error)       { (*Conn)(p).closed(err) }
