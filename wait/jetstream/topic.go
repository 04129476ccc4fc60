package jetstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/wait"
	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// Config says which messages a Topic follows and how. Stream, Subject and Decode are required;
// the zero value of every other field gives its default.
type Config[T any] struct {
	// Stream is the JetStream stream that holds the topic's messages. It must exist: creating
	// it (its storage, replicas and limits) is the application's decision.
	Stream string
	// Subject is the subject the topic's messages are published to: one of the stream's
	// subjects, without wildcards. Other subjects of the stream are not the topic's, though they
	// share its sequence numbers.
	Subject string
	// Decode turns a stored message into what Next returns, given its sequence number (the
	// stream's), so that a message carries its number as wait.Topic.PublishFunc makes a local
	// topic's carry theirs: an event stream's id, a field of its JSON. It runs once per message and
	// process, on the goroutine that receives the message (or reads it from the stream), and
	// may run on several goroutines at once; data is Decode's to keep. A message it refuses
	// (an error) is skipped and logged: cursors pass over it.
	Decode func(seq uint64, data []byte) (T, error)
	// History is how many messages the process keeps in memory, to answer the cursors it
	// covers without asking NATS; it is also the most messages one Next returns (the next call
	// returns the rest). Zero or less means 1000.
	History int
	// Timeout bounds each request to NATS: a publish's acknowledgement, a read of the stream.
	// Zero or less means 5 s.
	Timeout time.Duration
	// Logger receives what goes wrong while following the stream. Nil means slog.Default().
	Logger *slog.Logger
}

// A Topic is a long-poll topic whose messages live in a JetStream stream: Publish stores a
// message, Next waits for the messages after a cursor, and every process that follows the same
// stream and subject sees the same messages under the same sequence numbers.
//
// Its methods may be called from any goroutine, except Next and OnNext, which take the
// request's Ctx and are called from its handler (OnNext also from a continuation).
type Topic[T any] struct {
	cfg    Config[T]
	nc     *nats.Conn
	js     natsjs.JetStream
	stream natsjs.Stream
	cc     natsjs.ConsumeContext
	seq    wait.Sequence // mem.last, advanced with it under mu

	mu      sync.Mutex
	mem     history[T]
	primeTo uint64        // New waits until the consumer has delivered this one
	primed  chan struct{} // closed then; nil after
}

// New starts following cfg.Subject of cfg.Stream over nc and returns once the topic holds the
// last cfg.History messages (or ctx ends: a Topic that is not ready is not returned).
//
// nc must be made with nats.ReconnectBufSize(-1): a connection that buffers publishes while it
// reconnects would send later a message whose Publish had already failed, so that a client told
// "not stored" would find it stored. The connection's reconnection settings (nats.MaxReconnects,
// say) are what decide how long the topic survives NATS being away; -1, reconnect for ever, suits
// a server. Close the Topic before the connection.
func New[T any](ctx context.Context, nc *nats.Conn, cfg Config[T]) (*Topic[T], error) {
	if err := cfg.check(nc); err != nil {
		return nil, err
	}
	js, err := natsjs.New(nc)
	if err != nil {
		return nil, err
	}
	stream, err := js.Stream(ctx, cfg.Stream)
	if err != nil {
		return nil, fmt.Errorf("dwell/jetstream: stream %q: %w", cfg.Stream, err)
	}
	var last uint64
	switch m, err := stream.GetLastMsgForSubject(ctx, cfg.Subject); {
	case err == nil:
		last = m.Sequence
	case !errors.Is(err, natsjs.ErrMsgNotFound):
		return nil, fmt.Errorf("dwell/jetstream: last message of %q: %w", cfg.Subject, err)
	}
	// Follow from the last History sequence numbers: other subjects of the stream may take
	// some of them, so the history may start with fewer messages, never with a gap.
	floor := last - min(last, uint64(cfg.History))
	t := &Topic[T]{
		cfg:     cfg,
		nc:      nc,
		js:      js,
		stream:  stream,
		mem:     newHistory[T](cfg.History, floor),
		primeTo: last,
		primed:  make(chan struct{}),
	}
	t.seq.Advance(floor)
	if last == 0 {
		close(t.primed)
		t.primed = nil
	}
	cons, err := stream.OrderedConsumer(ctx, natsjs.OrderedConsumerConfig{
		FilterSubjects: []string{cfg.Subject},
		DeliverPolicy:  natsjs.DeliverByStartSequencePolicy,
		OptStartSeq:    floor + 1,
	})
	if err != nil {
		return nil, fmt.Errorf("dwell/jetstream: following %q: %w", cfg.Subject, err)
	}
	t.cc, err = cons.Consume(t.receive, natsjs.ConsumeErrHandler(t.consumeError))
	if err != nil {
		return nil, fmt.Errorf("dwell/jetstream: following %q: %w", cfg.Subject, err)
	}
	if err := t.waitPrimed(ctx); err != nil {
		t.cc.Stop()
		return nil, err
	}
	return t, nil
}

// check fills in cfg's defaults and refuses what cannot work.
func (cfg *Config[T]) check(nc *nats.Conn) error {
	switch {
	case nc == nil:
		return errors.New("dwell/jetstream: no NATS connection")
	case nc.Opts.ReconnectBufSize >= 0:
		return errors.New("dwell/jetstream: the NATS connection buffers publishes while it reconnects, " +
			"which would store later a message whose Publish failed; connect with nats.ReconnectBufSize(-1)")
	case cfg.Stream == "" || cfg.Subject == "":
		return errors.New("dwell/jetstream: Config.Stream and Config.Subject are required")
	case cfg.Decode == nil:
		return errors.New("dwell/jetstream: Config.Decode is required")
	}
	if cfg.History <= 0 {
		cfg.History = 1000
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return nil
}

// waitPrimed waits until the consumer has delivered the messages that were in the stream when
// New began.
func (t *Topic[T]) waitPrimed(ctx context.Context) error {
	t.mu.Lock()
	primed := t.primed
	t.mu.Unlock()
	if primed == nil {
		return nil
	}
	select {
	case <-primed:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("dwell/jetstream: reading the history of %q: %w", t.cfg.Subject, ctx.Err())
	}
}

// receive takes a message from the consumer, on the client library's goroutine: it joins the
// history, and the waiters whose cursor it passes are woken.
func (t *Topic[T]) receive(msg natsjs.Msg) {
	md, err := msg.Metadata()
	if err != nil {
		t.cfg.Logger.Warn("dwell/jetstream: a message without metadata", "stream", t.cfg.Stream, "err", err)
		return
	}
	seq := md.Sequence.Stream
	v, err := t.cfg.Decode(seq, msg.Data())
	if err != nil {
		t.cfg.Logger.Warn("dwell/jetstream: skipping a message Decode refused",
			"stream", t.cfg.Stream, "seq", seq, "err", err)
	}
	t.mu.Lock()
	if seq <= t.mem.last {
		t.mu.Unlock()
		return // delivered again by a consumer that restarted
	}
	t.mem.add(seq, v, err == nil)
	// Advanced before New or a Publish waiting for seq can return: Last must not lag behind
	// what they report received. (Advance never blocks, and takes no lock of the topic's.)
	t.seq.Advance(seq)
	if t.primed != nil && (seq >= t.primeTo || md.NumPending == 0) {
		close(t.primed)
		t.primed = nil
	}
	t.mu.Unlock()
}

// consumeError logs what the consumer reports. It recovers by itself: after a reconnection, or
// when it notices it missed messages, it starts again from the last sequence it delivered.
func (t *Topic[T]) consumeError(_ natsjs.ConsumeContext, err error) {
	t.cfg.Logger.Warn("dwell/jetstream: following the stream", "stream", t.cfg.Stream, "err", err)
}

// Publish stores data as the topic's next message and returns its sequence number, once
// JetStream has acknowledged storing it and this process has received it back, so that a poll
// of this instance made after Publish returns sees it (and every message before it). It fails
// with an error wrapping ErrUnavailable when the message could not be stored: at once when the
// connection is down, after Config.Timeout (or when ctx ends) when no acknowledgement comes.
// Such a message is not sent later; only a connection lost between the store and its
// acknowledgement can leave it stored all the same. A stored message whose delivery back is
// late (the consumer recovering from a reconnection) is still a success, once ctx or
// Config.Timeout ends.
//
// Publish blocks: from a handler, call it through wait.Do. The message reaches this process's
// waiters through the stream, like every other instance's.
func (t *Topic[T]) Publish(ctx context.Context, data []byte) (uint64, error) {
	if st := t.nc.Status(); st != nats.CONNECTED {
		return 0, unavailable(fmt.Errorf("connection %s", st))
	}
	ctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
	defer cancel()
	ack, err := t.js.Publish(ctx, t.cfg.Subject, data, natsjs.WithExpectStream(t.cfg.Stream))
	if err != nil {
		return 0, unavailable(err)
	}
	t.waitReceived(ctx, ack.Sequence)
	return ack.Sequence, nil
}

// waitReceived waits until the consumer has delivered message seq, or ctx ends: until the
// sequence, advanced with what the consumer delivers, has passed seq-1.
func (t *Topic[T]) waitReceived(ctx context.Context, seq uint64) {
	if seq > 0 {
		t.seq.WaitContext(ctx, seq-1)
	}
}

// Last returns the sequence number of the last message this process has received (or of the
// point it started following from, before the first).
func (t *Topic[T]) Last() uint64 { return t.seq.Value() }

// Close stops following the stream. Waiting handlers are not woken by it: they end with their
// timeout, or with a shutdown; call it once the server has shut down. Only Last may be called
// after it. Close the Topic before the NATS connection.
func (t *Topic[T]) Close() { t.cc.Stop() }
