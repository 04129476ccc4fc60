package main

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/examples/internal/chatapi"
	"github.com/dwellhttp/dwell/wait"
	"github.com/dwellhttp/dwell/wait/jetstream"
)

// history is how many messages each instance keeps in memory; older ones come from the stream.
const history = 1000

type chat struct {
	topic *jetstream.Topic[chatapi.Entry]
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
	ctx := c.Context()
	var perr error
	if err := wait.Do(c, func() { m.Seq, perr = ch.topic.Publish(ctx, data) }); err != nil {
		return // the client left; the message is stored or not, as the publish went
	}
	if perr != nil {
		c.SetHeader("Retry-After", "1")
		chatapi.Fail(c, 503, "message not stored: "+perr.Error())
		return
	}
	chatapi.WritePosted(c, m)
}

// poll handles GET /messages?after=N&timeout=MS: the messages after N at once (at most 1,000;
// the next poll gets the rest), or the next ones when they come, whichever instance they were
// posted to, or none when the timeout passes. The answer's last is the cursor for the next
// poll, here or at another instance. 503 when the messages after N must be read from the stream
// and NATS is unreachable.
func (ch *chat) poll(c *core.Ctx) {
	after, timeout, ok := chatapi.PollArgs(c)
	if !ok {
		return
	}
	msgs, last, err := ch.next(c, after, timeout)
	switch {
	case err == wait.ErrClosed:
		return // the client left
	case errors.Is(err, jetstream.ErrUnavailable):
		c.SetHeader("Retry-After", "1")
		chatapi.Fail(c, 503, "history unavailable: "+err.Error())
		return
	}
	// Messages, or none when the timeout passed or a shutdown began: the client polls again
	// with last, here or at another instance.
	chatapi.WriteMessages(c, msgs, last)
}

// next waits for the messages after the cursor. A parked request's stack holds the frames of
// the functions it is parked in, so this one, in the middle, is kept small: what comes before
// and after the wait lives in poll and chatapi, and the poll that does not wait in since.
func (ch *chat) next(c *core.Ctx, after uint64, timeout time.Duration) ([]chatapi.Entry, uint64, error) {
	if timeout == 0 {
		return ch.since(c, after)
	}
	return ch.topic.Next(c, after, timeout)
}

// since answers a poll that does not wait. It may have to read the stream, so it runs on the
// worker pool.
//
//go:noinline
func (ch *chat) since(c *core.Ctx, after uint64) (msgs []chatapi.Entry, last uint64, err error) {
	ctx := c.Context()
	if derr := wait.Do(c, func() { msgs, last, err = ch.topic.Since(ctx, after) }); derr != nil {
		return nil, after, derr
	}
	return msgs, last, err
}

// events handles GET /events (see chatapi). Sequence numbers are the stream's, so a client
// reconnecting to another instance resumes where it was; when NATS cannot give the history
// the stream ends and the client reconnects.
func (ch *chat) events(c *core.Ctx) { chatapi.Events(c, ch.topic.Last(), ch.topic.Next) }
