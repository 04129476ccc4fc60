package websocket

import (
	"time"
)

// Options configures an upgrade (Accept, Serve). The zero value works: every field says what
// zero means, and a nil *Options is the zero value. The same Options may serve any number of
// connections, and should: a connection refers to its Options rather than copying them, so
// they must not change while connections use them.
type Options struct {
	// Subprotocols lists the subprotocols the server speaks, in order of preference: the first
	// one the client offers (Sec-WebSocket-Protocol) is chosen, and Conn.Subprotocol says
	// which. Nil chooses none, whatever the client offers.
	Subprotocols []string

	// Origins lists the origins allowed besides the request's own, as host patterns
	// (path.Match syntax) matched against the Origin field's host and port:
	// "app.example.com", "*.example.com", "localhost:*". The request's own host
	// (same-origin) is always allowed, as is a request without an Origin (not from a browser);
	// "*" allows every origin. Nil allows the same origin only: a page of another site cannot
	// open a connection that its visitor's cookies authenticate. An origin refused gets 403.
	Origins []string

	// Compress accepts permessage-deflate (RFC 7692) when the client offers it: messages of at
	// least CompressMin bytes are sent compressed, and compressed ones are received. Without
	// ContextTakeover both sides compress each message on its own (the server asks the client
	// to, which RFC 7692 lets it), so that a connection between messages holds no compression
	// state: the compressors and decompressors are pooled.
	Compress bool

	// ContextTakeover lets compression carry its window from one message to the next, when the
	// client asks for it: messages compress better, and each connection keeps a compressor and
	// a decompressor with their windows for its whole life — about 130 KiB of RSS and 1.2
	// MB of Go heap (see docs/operations.md) — against none without it.
	ContextTakeover bool

	// CompressMin is the size under which a message is sent uncompressed (a small message does
	// not shrink); zero means 128 bytes.
	CompressMin int

	// MaxMessage bounds a message received, in bytes (decompressed): past it the connection is
	// closed with 1009. Zero or negative means 1 MiB.
	MaxMessage int64

	// MessageTimeout bounds the time from a message's first frame to its last (to within a
	// second): past it the connection is closed with 1008, so that a message begun and never
	// ended — one of endless empty fragments among them — holds its buffer and the loop's time
	// no longer. Zero means 1 minute; negative means none.
	MessageTimeout time.Duration

	// Budget is the budget that the messages in progress of the connections count against,
	// with those of every connection that shares it (see Budget). Nil means the package's
	// default budget, of DefaultMessageBudget bytes, which every connection whose Options
	// name none shares.
	Budget *Budget

	// PingInterval is how often a ping is sent to a connection; a client that does not answer
	// within PongTimeout is gone, and the connection closes. Zero means 30 s; negative sends
	// none.
	PingInterval time.Duration

	// PongTimeout is how long a ping may wait for its pong. Zero means 30 s.
	PongTimeout time.Duration

	// IdleTimeout closes (1001, "idle") a connection whose client has sent no message for that
	// long. Zero or negative means none: a client may listen for as long as it answers pings.
	IdleTimeout time.Duration

	// CloseTimeout is how long a close this side starts waits for the client's close frame
	// before the TCP connection is closed anyway. Zero means 5 s.
	CloseTimeout time.Duration

	// MaxQueued bounds the output of a connection waiting for a slow client, in bytes, for
	// Send, broadcasts, writes made where nothing can wait and the pongs that answer the
	// client's pings: a message that would queue more is handled by SlowClient (a pong
	// dropped is a ping unanswered). Zero means 1 MiB. (WriteMessage from the handler or a
	// goroutine queues its message whatever its size and waits, past the server's
	// WriteHighWater, for the client to take it.) Whatever the client sends, what it makes
	// the connection queue stays within the server's WriteHighWater and one pong: a
	// connection whose output is over that mark is not read until the client has taken half.
	MaxQueued int

	// SlowClient says what happens to a message that a client too slow to take its output
	// would queue past MaxQueued: CloseSlowClient (the default) closes the connection at once
	// (its error a 1008 CloseError); DropMessages drops the message and keeps the connection.
	SlowClient SlowClientPolicy
}

// A SlowClientPolicy is what Send does with a message for a client that has MaxQueued bytes
// of output waiting already.
type SlowClientPolicy uint8

const (
	// CloseSlowClient closes the connection at once, its queued output dropped, and ends it with
	// a CloseError of 1008 (policy violation): the client is not keeping up, and whatever it
	// would get next it would get late.
	CloseSlowClient SlowClientPolicy = iota
	// DropMessages drops the message and keeps the connection: for data where a later message
	// replaces an earlier one (a price, a position).
	DropMessages
)

// Defaults of the Options fields; see there.
const (
	defaultCompressMin  = 128
	defaultMaxMessage   = 1 << 20
	defaultPingInterval = 30 * time.Second
	defaultPongTimeout  = 30 * time.Second
	defaultCloseTimeout = 5 * time.Second
	defaultMaxQueued    = 1 << 20
	defaultMsgTimeout   = time.Minute
)

// The fields with their defaults. A connection keeps a pointer to its Options, not a copy, so
// that many connections cost one Options: the defaults are applied as each is read.

func (o *Options) compressMin() int {
	if o.CompressMin <= 0 {
		return defaultCompressMin
	}
	return o.CompressMin
}

func (o *Options) maxMessage() int64 {
	if o.MaxMessage <= 0 {
		return defaultMaxMessage
	}
	return o.MaxMessage
}

func (o *Options) pingInterval() time.Duration {
	if o.PingInterval == 0 {
		return defaultPingInterval
	}
	return max(o.PingInterval, 0)
}

func (o *Options) pongTimeout() time.Duration {
	if o.PongTimeout <= 0 {
		return defaultPongTimeout
	}
	return o.PongTimeout
}

func (o *Options) idleTimeout() time.Duration { return max(o.IdleTimeout, 0) }

func (o *Options) messageTimeout() time.Duration {
	if o.MessageTimeout == 0 {
		return defaultMsgTimeout
	}
	return max(o.MessageTimeout, 0)
}

func (o *Options) closeTimeout() time.Duration {
	if o.CloseTimeout <= 0 {
		return defaultCloseTimeout
	}
	return o.CloseTimeout
}

func (o *Options) maxQueued() int {
	if o.MaxQueued <= 0 {
		return defaultMaxQueued
	}
	return o.MaxQueued
}
