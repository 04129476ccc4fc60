package main

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/examples/internal/chatapi"
	"github.com/dwellhttp/dwell/wait"
	"github.com/dwellhttp/dwell/wait/jetstream"
	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// history is how many messages each instance keeps in memory; older ones come from the stream.
const history = 1000

// A chat serves the messages of one subject of a stream, through the generation that follows the
// stream's current life (stream.go).
type chat struct {
	nc      *nats.Conn
	js      natsjs.JetStream
	stream  string
	subject string
	gen     atomic.Pointer[generation] // the generation that serves

	sub     *nats.Subscription // the stream's advisories: created, deleted, updated, ...
	kick    chan struct{}      // a check is due (one buffered: more would add nothing)
	stop    chan struct{}      // closed by close, to end watch
	watched chan struct{}      // closed when watch has returned
}

// decode makes the entry of a stored message. The stream stores a message without its seq,
// which is the stream's sequence number: JetStream gives it on storing.
func decode(seq uint64, data []byte) (chatapi.Entry, error) {
	var m chatapi.Message
	if err := json.Unmarshal(data, &m); err != nil {
		return chatapi.Entry{}, err
	}
	return chatapi.NewEntry(m, seq), nil
}

// post handles POST /messages (see chatapi): 201 once the stream has stored the message; 503
// when NATS could not store it (it never will: the client may send it again).
func (ch *chat) post(c *core.Ctx) {
	m, ok := chatapi.ReadPost(c)
	if !ok {
		return
	}
	data, _ := json.Marshal(m)
	g := ch.acquire()
	defer g.release()
	ctx := c.Context()
	var epoch string
	var perr error
	if err := wait.Do(c, func() { m.Seq, epoch, perr = ch.publish(ctx, g, data) }); err != nil {
		return // the client left; the message is stored or not, as the publish went
	}
	if perr != nil {
		c.SetHeader("Retry-After", "1")
		chatapi.Fail(c, 503, "message not stored: "+perr.Error())
		return
	}
	chatapi.WritePosted(c, m, epoch)
}

// publish stores a message through g's Topic and returns its seq and the epoch of the stream
// that took it: g's, as far as this instance knows. A stream created again that it has not
// noticed yet may have taken the message all the same (clients find it there, see chatapi), and
// only a seq that g's Topic has passed already tells so for sure, since seqs only grow in a
// stream. The new stream's epoch is asked for then, and the watcher told: an answer naming the
// old history with a seq of the new one would point at another message there, and its client
// would send the message again.
func (ch *chat) publish(ctx context.Context, g *generation, data []byte) (uint64, string, error) {
	before := g.topic.Last()
	seq, err := g.topic.Publish(ctx, data)
	if err != nil || seq > before {
		return seq, g.epoch, err
	}
	ch.check()
	st, err := ch.js.Stream(ctx, ch.stream)
	if err != nil {
		// NATS took the message and cannot say more the next moment: the old epoch is all
		// there is to answer.
		return seq, g.epoch, nil
	}
	return seq, epochOf(st.CachedInfo()), nil
}

// poll handles GET /messages?after=N&timeout=MS: the messages after N at once (at most 1,000;
// the next poll gets the rest), or the next ones when they come, whichever instance they were
// posted to, or none when the timeout passes. The answer's last is the cursor for the next
// poll, here or at another instance. 503 when the messages after N must be read from the stream
// and NATS is unreachable.
//
// A poll that waits is detached in the generation's OnNext rather than parked in Next, so that a
// generation that ends can wake it with a Waker, and the page learns of a recreated stream at
// once, not when its poll times out. A detached request may be woken at any time; a handler
// parked in Next may be in the Hold of a wait.Do, which must not end before the worker has
// written its results.
func (ch *chat) poll(c *core.Ctx) {
	after, timeout, ok := chatapi.PollArgs(c)
	if !ok {
		return
	}
	g := ch.acquire()
	if timeout == 0 {
		msgs, last, err := g.since(c, after)
		ch.answer(c, g, msgs, last, err)
		g.release()
		return
	}
	p := &waitingPoll{ch: ch, g: g}
	g.OnNext(c, after, timeout, p.answer)
}

// A waitingPoll is a poll in the generation's OnNext: what its continuation needs.
type waitingPoll struct {
	ch *chat
	g  *generation
}

// answer is the poll's continuation, on its loop.
func (p *waitingPoll) answer(c *core.Ctx, msgs []chatapi.Entry, last uint64, err error) {
	p.ch.answer(c, p.g, msgs, last, err)
	p.g.release()
}

// answer writes what a poll of generation g found. A poll of a generation that has ended gets
// the new epoch, no messages and the cursor 0, whatever the old Topic gave: its client reads
// the new history from its start.
func (ch *chat) answer(c *core.Ctx, g *generation, msgs []chatapi.Entry, last uint64, err error) {
	switch {
	case err == wait.ErrClosed:
		return // the client left
	case g.over():
		chatapi.WriteMessages(c, nil, 0, ch.gen.Load().epoch)
	case errors.Is(err, jetstream.ErrUnavailable):
		c.SetHeader("Retry-After", "1")
		chatapi.Fail(c, 503, "history unavailable: "+err.Error())
	default:
		// Messages, or none when the timeout passed or a shutdown began: the client polls
		// again with last, here or at another instance.
		chatapi.WriteMessages(c, msgs, last, g.epoch)
	}
}

// since answers a poll that does not wait. It may have to read the stream, so it runs on the
// worker pool.
func (g *generation) since(c *core.Ctx, after uint64) (msgs []chatapi.Entry, last uint64, err error) {
	ctx := c.Context()
	if derr := wait.Do(c, func() { msgs, last, err = g.topic.Since(ctx, after) }); derr != nil {
		return nil, after, derr
	}
	return msgs, last, err
}

// events handles GET /events (see chatapi). Sequence numbers are the stream's, so a client
// reconnecting to another instance resumes where it was; when NATS cannot give the history
// the stream ends and the client reconnects. So it does when the generation ends: its client
// reconnects and is told the new epoch.
func (ch *chat) events(c *core.Ctx) {
	g := ch.acquire()
	defer g.release()
	chatapi.Events(c, g.epoch, g.topic.Last(), g.next)
}

// next is the event stream's wait: Topic.Next until the generation ends, which a stream waiting
// in Next notices when the wait ends, at its next message or ping (a Waker could not end that
// wait safely: see poll). What Next gave then is dropped: an old Topic may give the new
// stream's messages before this instance notices that the stream was created again.
func (g *generation) next(c *core.Ctx, after uint64, timeout time.Duration) ([]chatapi.Entry, uint64, error) {
	if g.over() {
		return nil, after, errEnded
	}
	msgs, last, err := g.topic.Next(c, after, timeout)
	if g.over() {
		return nil, after, errEnded
	}
	return msgs, last, err
}
