package jetstream

import (
	"context"
	"time"

	"github.com/dwellhttp/dwell/wait"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// read returns the messages after the cursor from the stream itself (at most Config.History),
// with the cursor to follow from: the last message's sequence number or, when it read up to the
// end, the stream's last sequence number. It blocks on NATS: call it from a worker.
//
// A cursor ahead of what this process has received is answered here too, so that it is checked
// against the stream; when NATS cannot say, it is taken as it is and the caller waits for the
// messages after it.
func (t *Topic[T]) read(ctx context.Context, after uint64) ([]T, uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, t.cfg.Timeout)
	defer cancel()
	info, err := t.stream.Info(ctx)
	if err != nil {
		if after >= t.Last() {
			return nil, after, nil
		}
		return nil, after, unavailable(err)
	}
	st := info.State
	if after >= st.LastSeq {
		return nil, st.LastSeq, nil
	}
	var missed error
	if after+1 < st.FirstSeq {
		missed = wait.ErrMissed // the stream's limits removed messages after the cursor
	}
	cons, err := t.stream.CreateConsumer(ctx, natsjs.ConsumerConfig{
		FilterSubject:     t.cfg.Subject,
		DeliverPolicy:     natsjs.DeliverByStartSequencePolicy,
		OptStartSeq:       after + 1,
		AckPolicy:         natsjs.AckNonePolicy,
		MemoryStorage:     true,
		InactiveThreshold: time.Minute, // if the delete below fails
	})
	if err != nil {
		return nil, after, unavailable(err)
	}
	defer t.deleteConsumer(cons.CachedInfo().Name)
	pending := cons.CachedInfo().NumPending
	if pending == 0 {
		return nil, st.LastSeq, missed
	}
	n := min(pending, uint64(t.cfg.History))
	deadline, _ := ctx.Deadline()
	batch, err := cons.Fetch(int(n), natsjs.FetchMaxWait(time.Until(deadline)))
	if err != nil {
		return nil, after, unavailable(err)
	}
	msgs := make([]T, 0, n)
	var last, got uint64
	for m := range batch.Messages() {
		md, err := m.Metadata()
		if err != nil {
			continue
		}
		got++
		last = md.Sequence.Stream
		v, err := t.cfg.Decode(last, m.Data())
		if err != nil {
			t.cfg.Logger.Warn("dwell/jetstream: skipping a message Decode refused",
				"stream", t.cfg.Stream, "seq", last, "err", err)
			continue
		}
		msgs = append(msgs, v)
	}
	if got == 0 {
		err := batch.Error()
		if err == nil {
			err = context.DeadlineExceeded
		}
		return nil, after, unavailable(err)
	}
	if got == pending {
		// Everything up to the consumer's start was read, and the stream's last message
		// (of any subject) was stored before that.
		last = max(last, st.LastSeq)
	}
	return msgs, last, missed
}

// deleteConsumer removes a consumer made to read history, with a deadline of its own: the
// request's may have passed.
func (t *Topic[T]) deleteConsumer(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), t.cfg.Timeout)
	defer cancel()
	if err := t.stream.DeleteConsumer(ctx, name); err != nil {
		t.cfg.Logger.Debug("dwell/jetstream: deleting a history consumer", "consumer", name, "err", err)
	}
}
