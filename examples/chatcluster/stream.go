package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/examples/internal/chatapi"
	"github.com/dwellhttp/dwell/wait"
	"github.com/dwellhttp/dwell/wait/jetstream"
	"github.com/dwellhttp/dwell/websocket"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// The chat's history is its JetStream stream, and a stream deleted and created again is a new
// history, numbered from 1 again. A jetstream.Topic does not notice: it keeps the messages of
// the old stream and drops those of the new one whose sequence numbers it has passed. So the
// chat follows each life of the stream with a Topic of its own, a generation, and replaces it
// when the stream's creation time is no longer the one it follows.

const (
	// streamCheck is how often the chat asks for the stream's creation time, in case the
	// advisories of its deletion and creation were missed (this instance was away from NATS).
	streamCheck = 10 * time.Second
	// openTimeout bounds the requests to NATS of a check and of following a new stream.
	openTimeout = 30 * time.Second
)

// errEnded is what the requests waiting on a generation that has ended are woken with.
var errEnded = errors.New("chatcluster: the stream's history has ended")

// A generation is one life of the stream as this instance follows it: a Topic over it, the
// epoch that names it (see chatapi), the requests using the Topic and the polls parked on it.
type generation struct {
	topic *jetstream.Topic[chatapi.Entry]
	epoch string
	feed  *websocket.Feed[chatapi.Entry] // the generation (OnNext) for the sockets (socket.go)

	mu     sync.Mutex
	users  int                      // requests using topic: once ended, the last one closes it
	parked map[*core.Ctx]core.Waker // polls waiting in topic.OnNext
	ended  bool                     // a newer generation serves, or the chat closed
	closed bool                     // topic is closed (or closing): acquire refuses
}

// epochOf is the epoch of a stream: its creation time, which JetStream keeps with the stream (a
// NATS restart leaves it as it was) and reports alike to every instance, and which a stream
// created again does not share.
func epochOf(info *natsjs.StreamInfo) string {
	return info.Created.UTC().Format(time.RFC3339Nano)
}

// open follows the stream as it is now. Were it created again between the two requests, the
// epoch would be the old stream's and the Topic the new one's; the next check sees the new
// creation time and follows the stream again.
func (ch *chat) open(ctx context.Context) (*generation, error) {
	st, err := ch.js.Stream(ctx, ch.stream)
	if err != nil {
		return nil, fmt.Errorf("stream %q: %w", ch.stream, err)
	}
	topic, err := jetstream.New(ctx, ch.nc, jetstream.Config[chatapi.Entry]{
		Stream:  ch.stream,
		Subject: ch.subject,
		Decode:  decode,
		History: history,
	})
	if err != nil {
		return nil, err
	}
	g := &generation{topic: topic, epoch: epochOf(st.CachedInfo()), parked: make(map[*core.Ctx]core.Waker)}
	g.feed = chatapi.NewFeed(g, g.epoch)
	g.feed.End = ch.endSocket
	return g, nil
}

// watch checks the stream whenever it is told to (kick: an advisory of the stream's, its
// deletion or creation among them, or a post that found a new stream), and every streamCheck,
// until close. It alone checks, so that checks never overlap.
func (ch *chat) watch() {
	defer close(ch.watched)
	tick := time.NewTicker(streamCheck)
	defer tick.Stop()
	for {
		select {
		case <-ch.stop:
			return
		case <-ch.kick:
		case <-tick.C:
		}
		ch.follow()
	}
}

// check asks watch for a check of the stream.
func (ch *chat) check() {
	select {
	case ch.kick <- struct{}{}:
	default: // one is due already
	}
}

// follow follows the stream anew when its creation time has changed. A stream that is missing,
// or that NATS cannot tell of, changes nothing: posts fail (503) until it is back, polls are
// answered from what this instance has, and a later check finds the new stream.
func (ch *chat) follow() {
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	st, err := ch.js.Stream(ctx, ch.stream)
	if err != nil || epochOf(st.CachedInfo()) == ch.gen.Load().epoch {
		return
	}
	g, err := ch.open(ctx)
	if err != nil {
		log.Printf("chatcluster: following the new stream %q: %v", ch.stream, err)
		return
	}
	if old := ch.gen.Swap(g); old.end() {
		go old.topic.Close() // see release
	}
}

// acquire returns the generation that serves, counted as used until release.
func (ch *chat) acquire() *generation {
	for {
		if g := ch.gen.Load(); g.acquire() {
			return g
		}
		// g ended and closed between the load and the count: a newer one is in place.
	}
}

func (g *generation) acquire() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.users++
	return true
}

// release ends a use that acquire counted: the last one of a generation that has ended closes its
// Topic. It does so on a goroutine of its own: release runs on a loop, which must not wait, and
// Close waits for the lock of the client library's consumer, which the library holds while it
// recreates the consumer, retrying for seconds against a stream that is gone.
func (g *generation) release() {
	g.mu.Lock()
	g.users--
	last := g.closeIfUnusedLocked()
	g.mu.Unlock()
	if last {
		go g.topic.Close()
	}
}

// end marks the generation as past and wakes the polls parked on it, which answer the new
// epoch. It reports whether the caller is to close the Topic: no request uses it. Otherwise the
// last one to release it closes it (event streams end at their next message or ping, posts once
// stored): Topic.Close may not be called while requests still use the Topic.
func (g *generation) end() (closeTopic bool) {
	g.mu.Lock()
	g.ended = true
	parked := g.parked
	g.parked = nil
	closeTopic = g.closeIfUnusedLocked()
	g.mu.Unlock()
	for _, w := range parked {
		w.Wake(errEnded)
	}
	return closeTopic
}

// closeIfUnusedLocked reports whether the generation is to close now (and marks it closed):
// when it has ended and nothing uses it.
func (g *generation) closeIfUnusedLocked() bool {
	if !g.ended || g.users > 0 || g.closed {
		return false
	}
	g.closed = true
	return true
}

// over reports whether the generation has ended: a newer one serves, or the chat has closed.
func (g *generation) over() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ended
}

// park notes a request (a poll, a socket) that topic.OnNext left detached, so that end can
// wake it; when the generation has ended already it is woken at once. Call it from the
// request's handler or continuation, right after OnNext (the generation's OnNext does): the
// Waker is for the Detach OnNext left the request in, and the continuation cannot run (and
// unpark) before the code that called OnNext returns.
func (g *generation) park(c *core.Ctx) {
	w := c.Waker()
	g.mu.Lock()
	ended := g.ended
	if !ended {
		g.parked[c] = w
	}
	g.mu.Unlock()
	if ended {
		w.Wake(errEnded)
	}
}

// unpark forgets a parked request, once its continuation runs.
func (g *generation) unpark(c *core.Ctx) {
	g.mu.Lock()
	delete(g.parked, c)
	g.mu.Unlock()
}

// OnNext is the Topic's OnNext, for the polls and the sockets' Feed (a websocket.Source), within
// the generation: a request it leaves detached is parked in the generation, which wakes it when
// it ends (errEnded), and what the Topic gives once the generation has ended — it may be the new
// stream's messages, which this instance has not noticed yet — becomes errEnded.
func (g *generation) OnNext(c *core.Ctx, after uint64, timeout time.Duration, k func(*core.Ctx, []chatapi.Entry, uint64, error)) {
	if g.over() {
		k(c, nil, after, errEnded)
		return
	}
	n := &waitingNext{g: g, k: k}
	g.topic.OnNext(c, after, timeout, n.took)
	if !n.taken {
		// Right after OnNext: the Waker is for the Detach OnNext left the request in, and the
		// continuation cannot run (and unpark) before the handler or continuation returns.
		g.park(c)
	}
}

// A waitingNext is a request in the generation's OnNext: what its continuation needs.
type waitingNext struct {
	g     *generation
	k     func(*core.Ctx, []chatapi.Entry, uint64, error)
	taken bool // set by took, which may run before OnNext returns
}

// took is the Topic's continuation, on the request's loop.
func (n *waitingNext) took(c *core.Ctx, msgs []chatapi.Entry, last uint64, err error) {
	n.taken = true
	n.g.unpark(c)
	if err != wait.ErrClosed && err != wait.ErrShutdown && n.g.over() {
		msgs, err = nil, errEnded
	}
	n.k(c, msgs, last, err)
}
