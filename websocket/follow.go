package websocket

import (
	"errors"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/bufpool"
	"github.com/dwellhttp/dwell/wait"
	"github.com/dwellhttp/dwell/websocket/internal/frame"
)

// Following a topic: a client that asks for everything after its cursor, then every message as
// it comes, in the event style, so that a follower waiting for the next message holds no
// goroutine and no coroutine. The upgrade's request stays detached on the topic (Source.OnNext)
// for the connection's life; each wake-up sends what came and waits again:
//
//	Follow ──OnNext(cursor)──> messages at once ──Encode──> Send ──> OnNext(last) ...
//	                       └─> none: detached, a waiter node in the loop's list
//	publish ──> the loop's drain ──> take ──Encode──> Send ──> OnNext(last) ...
//	Send past the high-water mark ──> detached until Drained ──> the rest, then OnNext
//
// OnNext calls its continuation before it returns when messages are there already; the
// follower takes them in a loop rather than recursing, so a topic that keeps giving does not
// grow the stack, and the application sees none of it.

// A Source is a sequence of messages with cursors that a Feed follows: *wait.Topic and
// *jetstream.Topic (package wait/jetstream) are Sources, and so is an application's type that
// wraps one — to end its waits early, say, when the history it follows ends.
type Source[T any] interface {
	// OnNext gives k the messages after the cursor after, oldest first, with the cursor after
	// them: at once, before OnNext returns, when there are some; otherwise once one comes or
	// timeout passes (ErrTimeout), with the request detached (core.Ctx.Detach) meanwhile. It
	// is wait.Topic.OnNext's contract.
	OnNext(c *core.Ctx, after uint64, timeout time.Duration, k func(c *core.Ctx, msgs []T, last uint64, err error))
}

// A Feed sends the messages of a topic to the WebSocket connections that follow it (Follow):
// to each, what came after its cursor, then every message as it is published, in order, none
// twice, none lost unless the slow-client policy drops it. The messages are encoded by Encode,
// a batch to a WebSocket message; a message published while many connections wait is encoded
// and framed once for all of them (and compressed once, for those that compress without
// context takeover).
//
// A connection that follows holds no goroutine and no coroutine while it waits: its
// upgrade's request waits on the topic, detached, and the connection costs about 500 bytes
// more than an idle one (TestFollowFootprint), where the sequential style's handler parked in
// Topic.Next costs about 3 KB more, its coroutine's stack among them.
//
// What stops a connection from following: its close (then nothing more is done), a shutdown
// (the connection closes with 1001, as every WebSocket does), and an error of the Source's own —
// a history that ended, a store that cannot be read — which End handles.
//
// Set the fields before the first Follow and do not change them after; a Feed must not be
// copied after first use. Its methods may be called from any number of loops at once.
type Feed[T any] struct {
	// Topic is the source of the messages that Follow sends. A Feed whose connections follow
	// topics of their own (a topic per build, per room) leaves it nil and calls FollowTopic.
	Topic Source[T]

	// Encode appends to b the data of the WebSocket message that carries msgs, oldest first,
	// and returns it. last is the cursor after them: the client's cursor once it has the
	// message, to reconnect with. err says more: wait.ErrMissed when some messages before msgs
	// are lost to this client (its cursor was older than the topic's history), nil otherwise.
	// msgs is empty in two messages a client may be sent: the sign that it has caught up
	// (err nil; see CaughtUp), and the heartbeat (wait.ErrTimeout; see Heartbeat). Required.
	//
	// Encode runs on the connection's loop and must not block; msgs is lent for the call.
	// It must depend on its arguments alone: the message made for one connection is sent to
	// the others that are given the same batch. (A Feed per topic, then, and for a topic whose
	// encoding names something that changes — an epoch — a Feed per value of it.)
	Encode func(b []byte, msgs []T, last uint64, err error) []byte

	// Type is the type of the messages sent: Text (the zero value means Text) or Binary.
	// Text is sent as Encode made it, its UTF-8 Encode's to ensure.
	Type MessageType

	// Seq returns the sequence number of a message of the topic. With it a batch too large
	// for the connection's output to take whole (a client back from far behind) is sent as
	// several messages, each with its own last, so that catching up does not meet the
	// slow-client policy: each of at most Options.MaxQueued less the server's WriteHighWater
	// (a quarter of MaxQueued, if that is more), or of one message. Nil sends each batch whole.
	Seq func(v T) uint64

	// CaughtUp sends, once the messages after the client's cursor have been sent and nothing
	// more has come, a message of none (Encode with no messages and a nil error, last the
	// cursor): the client's sign that it is live, and of the cursor it follows from — the
	// topic's last when the client's was ahead of the topic (from an earlier process, say).
	CaughtUp bool

	// Heartbeat, when positive, sends a message of none (Encode with no messages and
	// wait.ErrTimeout) after that long with nothing new, so that a client that hears nothing
	// for longer knows its connection is gone (a browser's code cannot see the protocol's
	// pings). Zero or negative sends none.
	Heartbeat time.Duration

	// End is called on the connection's loop when the Source ends the following with an error
	// of its own (or the request's deadline, core.ErrDeadline, if a middleware gave it one),
	// the connection still open: it sends what the client should know and closes the
	// connection (Conn.Close) or leaves it open without the following. Nil closes it with 1011
	// (CloseInternalError).
	End func(c *Conn, err error)

	following atomic.Int64                  // connections following: past one, batches of one are prepared
	cache     atomic.Pointer[preparedBatch] // the last batch of one message prepared
	hint      atomic.Int32                  // the size of the last encoding: the next one's buffer
	per       atomic.Int32                  // bytes per message in the last batch encoded, for pieces
}

// A preparedBatch is a batch of one message, encoded and framed once for every connection that
// is given it: the batch of src that ends at last.
type preparedBatch struct {
	src  any // the Source, as a comparable value (see follower.shared)
	last uint64
	pm   PreparedMessage
}

var (
	errFollowSequential = errors.New("websocket: Follow on a connection made by Accept; a Feed follows one made by Serve")
	errNoTopic          = errors.New("websocket: Follow of a Feed without a Topic")
)

// Follow makes the event-style connection c follow the Feed's topic from the cursor after:
// the messages after it at once, as Encode makes them, then the next ones as they come, until
// the connection closes or the Source ends the following (see Feed). c is the connection
// Serve made of cx's request: call Follow from cx's handler right after Serve, once per
// connection, and return right after it; cx then waits on the topic, detached, for the
// connection's life, and the request ends when the following does.
//
// The application's Events (those c was served with) go on: its Message takes what the
// client sends, and its Sends go between the Feed's messages; its Drained is called after the
// Feed's own, its Close when the connection closes.
//
// A slow client holds its messages back: when a send leaves the connection's output past the
// server's WriteHighWater, the connection takes nothing more from the topic until Drained, and
// then goes on from its cursor, so that its output stays within the mark and a batch. A
// message sent past Options.MaxQueued all the same (a batch larger than that, or the
// application's sends on top) meets the slow-client policy: CloseSlowClient closes the
// connection, and the client reconnects with its cursor; DropMessages drops that message and
// goes on after it.
//
// Follow returns an error for a connection made by Accept, whose handler reads on.
func (f *Feed[T]) Follow(cx *core.Ctx, c *Conn, after uint64) error {
	return f.FollowTopic(cx, c, f.Topic, after)
}

// FollowTopic is Follow from the Source src rather than the Feed's Topic: one Feed serves the
// connections of many topics — a topic per build, per room, chosen by the request — with the
// same Encode and policy, and no map of Feeds for the application to keep. A message published
// while several connections follow its topic is still encoded once for them; so that the
// connections of one topic are told from another's, src is compared with ==: a pointer, as
// *wait.Topic, or another comparable value (one that is not is followed without that sharing).
func (f *Feed[T]) FollowTopic(cx *core.Ctx, c *Conn, src Source[T], after uint64) error {
	if src == nil {
		return errNoTopic
	}
	if c.ev == nil {
		return errFollowSequential
	}
	w := &follower[T]{f: f, src: src, cx: cx, c: c, app: c.ev, cursor: after}
	if reflect.TypeOf(src).Comparable() {
		w.shared = src
	}
	w.ev = *c.ev
	w.ev.Drained = w.drained
	w.took = w.take
	c.ev = &w.ev
	f.following.Add(1)
	cx.Seam().WakeOnShutdown()
	w.run()
	return nil
}

// A follower is one connection following a Feed: what its request's continuations need.
type follower[T any] struct {
	f      *Feed[T]
	src    Source[T]
	shared any        // src when it is comparable: the key of the batches prepared once for all
	cx     *core.Ctx  // the upgrade's request, detached on the topic or for Drained
	drain  core.Waker // the detach for Drained (fDraining)
	c      *Conn
	app    *Events // the application's
	ev     Events  // the connection's: the application's, with Drained the follower's first
	took   func(*core.Ctx, []T, uint64, error)
	cursor uint64 // what the client has been sent up to

	// A batch taken from the topic and not sent yet: the rest of one behind backpressure, or
	// one OnNext gave before it returned.
	msgs  []T
	last  uint64
	err   error
	flags uint8
}

// The bits of follower.flags.
const (
	fTaken    = 1 << iota // msgs, last and err hold a batch to handle
	fInline               // run is in OnNext: take keeps the batch for run
	fLive                 // the client has caught up (CaughtUp's message is sent)
	fDraining             // detached until Drained
	fStopped
)

// run follows on, on the loop: it handles the batch taken, then waits on the topic, for as long
// as OnNext gives at once. It returns once the request is detached (on the topic, or for
// Drained) or the following has stopped.
func (w *follower[T]) run() {
	for {
		if w.flags&fTaken != 0 {
			w.flags &^= fTaken
			if !w.handle() {
				return
			}
		}
		w.flags |= fInline
		w.src.OnNext(w.cx, w.cursor, w.timeout(), w.took)
		w.flags &^= fInline
		if w.flags&fTaken == 0 {
			return // detached: take runs when the wait ends
		}
	}
}

// timeout is the wait for the next batch: the shortest there is while the client catches up
// and CaughtUp is to be sent, so that a wait that finds nothing ends at once with the cursor
// the Source waits from; then the heartbeat's.
func (w *follower[T]) timeout() time.Duration {
	if w.f.CaughtUp && w.flags&fLive == 0 {
		return time.Nanosecond
	}
	return max(w.f.Heartbeat, 0)
}

// take is OnNext's continuation: it keeps the batch for run, when OnNext gave it before
// returning, or goes on with it.
func (w *follower[T]) take(_ *core.Ctx, msgs []T, last uint64, err error) {
	w.msgs, w.last, w.err = msgs, last, err
	w.flags |= fTaken
	if w.flags&fInline == 0 {
		w.run()
	}
}

// handle sends the batch taken, or acts on why there is none, and reports whether to wait on the
// topic next.
func (w *follower[T]) handle() bool {
	c := w.c
	if c.state != stateOpen {
		return w.stop()
	}
	err := w.err
	switch {
	case len(w.msgs) > 0:
		return w.sendBatch()
	case err == nil, err == wait.ErrMissed:
		w.cursor = w.last
		if err == nil {
			return true
		}
	case err == wait.ErrTimeout:
		w.cursor = w.last
		if w.flags&fLive == 0 && w.f.CaughtUp {
			w.flags |= fLive
			err = nil
		}
	case err == wait.ErrClosed:
		return w.stop()
	case err == wait.ErrShutdown:
		c.startClose(CloseGoingAway, "server shutting down")
		return w.stop()
	default:
		w.stop()
		if w.f.End != nil {
			w.f.End(c, err)
		} else {
			c.Close(CloseInternalError, "")
		}
		return false
	}
	// A message of none: caught up, a heartbeat, or messages lost and none kept.
	b := w.f.encode(nil, w.cursor, err)
	r := c.send(w.f.typ(), b, true)
	bufpool.Put(b)
	return w.sent(r)
}

// sendBatch sends the batch taken, in pieces when Seq allows and it is large, and reports
// whether to wait on the topic next: not when it stopped, or waits for Drained with the rest.
func (w *follower[T]) sendBatch() bool {
	f, c := w.f, w.c
	// A piece sent with the output at the high-water mark fits under MaxQueued.
	limit := max(c.o.maxQueued()-c.hc.HighWater(), c.o.maxQueued()/4)
	for len(w.msgs) > 0 {
		msgs, last := w.msgs, w.last
		var r SendResult
		if len(msgs) == 1 && w.err == nil && w.shared != nil && f.following.Load() > 1 {
			r = c.sendPrepared(f.prepared(w.shared, msgs, last))
		} else {
			if f.Seq != nil {
				// Start from as many as the last batch's size per message says fit, so that a
				// long catch-up is not encoded whole for each piece.
				if per := int(f.per.Load()); per > 0 && len(msgs) > max(limit/per, 1) {
					msgs = msgs[:max(limit/per, 1)]
					last = f.Seq(msgs[len(msgs)-1])
				}
			}
			b := f.encode(msgs, last, w.err)
			for len(b) > limit && len(msgs) > 1 && f.Seq != nil {
				// A share of the batch that should encode to the limit, at least one message less.
				msgs = msgs[:max(1, min(len(msgs)-1, len(msgs)*limit/len(b)))]
				last = f.Seq(msgs[len(msgs)-1])
				bufpool.Put(b)
				b = f.encode(msgs, last, w.err)
			}
			f.per.Store(int32(min(len(b)/len(msgs)+1, bufpool.MaxShared)))
			r = c.send(f.typ(), b, true)
			bufpool.Put(b)
		}
		w.msgs, w.err, w.cursor = w.msgs[len(msgs):], nil, last
		if !w.sent(r) {
			return false
		}
	}
	w.msgs = nil // what was sent is not kept
	return true
}

// sent acts on a send's result, and reports whether to go on: not when the connection is
// closed or closing (the slow-client policy may have closed it), nor while its output is past
// the high-water mark: the request is then detached until Drained.
func (w *follower[T]) sent(r SendResult) bool {
	c := w.c
	if r == SendClosed || c.state != stateOpen {
		w.msgs = nil
		return w.stop()
	}
	if c.hc.Buffered() > c.hc.HighWater() {
		// Drained is owed: the write that went past the mark made it so (core.Conn.Write).
		w.flags |= fDraining
		w.drain = w.cx.Waker()
		w.cx.Detach(0, w.resume)
		return false
	}
	return true
}

// drained is the connection's Drained: the follower's wait ends, then the application's
// Drained runs.
func (w *follower[T]) drained(c *Conn) {
	if w.flags&fDraining != 0 {
		w.flags &^= fDraining
		w.cx.Seam().Loop().Wake(w.drain, nil)
	}
	if w.app.Drained != nil {
		w.app.Drained(c)
	}
}

// resume is the continuation of a wait for Drained: the rest of the batch goes, then the
// following goes on; or the wait ended with the connection, or a shutdown, which handle acts on.
func (w *follower[T]) resume(_ *core.Ctx, err error) {
	w.flags &^= fDraining
	switch {
	case err != nil:
		w.msgs, w.last, w.err = nil, w.cursor, err
	case !w.sent(SendQueued):
		return // the application's sends filled the output again: wait on
	case len(w.msgs) == 0:
		w.run() // the batch is sent: wait on the topic
		return
	}
	w.flags |= fTaken
	w.run()
}

// stop ends the following, once, and reports false for the callers' returns.
func (w *follower[T]) stop() bool {
	if w.flags&fStopped == 0 {
		w.flags |= fStopped
		w.f.following.Add(-1)
	}
	return false
}

// typ returns the type of the messages sent.
func (f *Feed[T]) typ() MessageType {
	if f.Type == 0 {
		return Text
	}
	return f.Type
}

// encode encodes a batch into a message buffer, which the caller gives back (bufpool.Put) once sent.
func (f *Feed[T]) encode(msgs []T, last uint64, err error) []byte {
	b := f.Encode(bufpool.Get(int(f.hint.Load())), msgs, last, err)
	f.hint.Store(int32(min(len(b), bufpool.MaxShared)))
	return b
}

// prepared returns the batch of one message of src that ends at last, encoded and framed once
// for all the connections given it: those woken by the same publish, on every loop, get the one
// made first (a publish while others are being sent may make it again: the cache holds one).
func (f *Feed[T]) prepared(src any, msgs []T, last uint64) *PreparedMessage {
	if p := f.cache.Load(); p != nil && p.last == last && p.src == src {
		return &p.pm
	}
	p := &preparedBatch{src: src, last: last}
	b := f.encode(msgs, last, nil)
	p.pm.plain = frame.AppendHeader(make([]byte, 0, frame.MaxHeaderSize+len(b)),
		frame.Header{Fin: true, Opcode: frame.Opcode(f.typ()), Length: int64(len(b))})
	h := len(p.pm.plain)
	p.pm.plain = append(p.pm.plain, b...)
	p.pm.data = p.pm.plain[h:]
	bufpool.Put(b)
	f.cache.Store(p)
	return &p.pm
}
