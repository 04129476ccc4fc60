package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/examples/internal/chatpage"
	"github.com/dwellhttp/dwell/wait"
	"github.com/dwellhttp/dwell/wait/jetstream"
	"github.com/google/uuid"
)

// Limits of the API: examples/chat's (the text and name limits are chatpage's).
const (
	history        = 1000             // messages each instance keeps in memory; older ones come from the stream
	maxBody        = 64 << 10         // bytes of a POST body: room for a text escaped as \uXXXX
	defaultTimeout = 30 * time.Second // of a poll that names none
	maxTimeout     = 120 * time.Second
	eventsPing     = 25 * time.Second // a comment on an idle event stream, to notice a gone client
)

// A message as the API shows it. The stream stores it without its seq, which is the stream's
// sequence number: JetStream gives it on storing.
type message struct {
	ID   string `json:"id"`
	Seq  uint64 `json:"seq,omitempty"`
	Name string `json:"name,omitempty"`
	Text string `json:"text"`
	Time string `json:"time"`
}

// An entry is a message as the topic keeps it: encoded for the API once per instance, when it
// arrives, so that answering a thousand polls costs no encoding and a slow event stream holds
// references, not copies.
type entry struct {
	seq  uint64
	json []byte
}

// decode makes the entry of a stored message.
func decode(seq uint64, data []byte) (entry, error) {
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		return entry{}, err
	}
	m.Seq = seq
	b, err := json.Marshal(m)
	return entry{seq, b}, err
}

type chat struct {
	topic *jetstream.Topic[entry]
}

// post handles POST /messages {"text": "...", "name": "..."}: 201 {"id", "seq", "time"} once
// the stream has stored it; 400 for bad JSON, a text missing or blank, a name with control
// characters; 413 for a text or name over its limit, or a body over maxBody; 503 when NATS
// could not store it (it never will: the client may send it again).
func (ch *chat) post(c *core.Ctx) {
	b, err := body.ReadAll(c, maxBody)
	switch {
	case errors.Is(err, core.ErrBodyTooLarge):
		fail(c, 413, fmt.Sprintf("request body over %d KiB", maxBody>>10))
		return
	case err != nil:
		return // a body that broke off or stalled: the server answers
	}
	var in struct {
		Text *string `json:"text"`
		Name string  `json:"name"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		fail(c, 400, "bad JSON: "+err.Error())
		return
	}
	if in.Text == nil {
		fail(c, 400, `"text" is missing`)
		return
	}
	name := chatpage.TrimName(in.Name)
	if status, msg := chatpage.Check(*in.Text, name); status != 0 {
		fail(c, status, msg)
		return
	}
	m := message{ID: uuid.NewString(), Name: name, Text: *in.Text, Time: time.Now().UTC().Format(chatpage.TimeFormat)}
	data, _ := json.Marshal(m)
	ctx := c.Context()
	var perr error
	if err := wait.Do(c, func() { m.Seq, perr = ch.topic.Publish(ctx, data) }); err != nil {
		return // the client left; the message is stored or not, as the publish went
	}
	if perr != nil {
		c.SetHeader("Retry-After", "1")
		fail(c, 503, "message not stored: "+perr.Error())
		return
	}
	c.SetStatus(201)
	c.SetHeader("Content-Type", "application/json")
	c.WriteString(`{"id":"` + m.ID + `","seq":` + strconv.FormatUint(m.Seq, 10) + `,"time":"` + m.Time + "\"}\n")
}

// poll handles GET /messages?after=N&timeout=MS: the messages after N at once (at most 1,000;
// the next poll gets the rest), or the next ones when they come, whichever instance they were
// posted to, or none when the timeout passes (default 30 s, at most 120 s; 0 does not wait).
// The answer's last is the cursor for the next poll, here or at another instance. 503 when
// the messages after N must be read from the stream and NATS is unreachable.
func (ch *chat) poll(c *core.Ctx) {
	after, ok := queryUint(c, "after", 0)
	if !ok {
		fail(c, 400, "after must be a sequence number")
		return
	}
	ms, ok := queryUint(c, "timeout", uint64(defaultTimeout/time.Millisecond))
	if !ok {
		fail(c, 400, "timeout must be a number of milliseconds")
		return
	}
	timeout := min(time.Duration(ms)*time.Millisecond, maxTimeout)
	msgs, last, err := ch.next(c, after, timeout)
	switch {
	case err == wait.ErrClosed:
		return // the client left
	case errors.Is(err, jetstream.ErrUnavailable):
		c.SetHeader("Retry-After", "1")
		fail(c, 503, "history unavailable: "+err.Error())
		return
	}
	// Messages, or none when the timeout passed or a shutdown began: the client polls again
	// with last, here or at another instance.
	writeMessages(c, msgs, last)
}

// next waits for the messages after the cursor. A parked request's stack holds the frames of
// the functions it is parked in, so this one, in the middle, is kept small: what comes before
// and after the wait lives in poll and writeMessages, and the poll that does not wait in since.
func (ch *chat) next(c *core.Ctx, after uint64, timeout time.Duration) ([]entry, uint64, error) {
	if timeout == 0 {
		return ch.since(c, after)
	}
	return ch.topic.Next(c, after, timeout)
}

// since answers a poll that does not wait. It may have to read the stream, so it runs on the
// worker pool.
//
//go:noinline
func (ch *chat) since(c *core.Ctx, after uint64) (msgs []entry, last uint64, err error) {
	ctx := c.Context()
	if derr := wait.Do(c, func() { msgs, last, err = ch.topic.Since(ctx, after) }); derr != nil {
		return nil, after, derr
	}
	return msgs, last, err
}

// writeMessages answers a poll.
func writeMessages(c *core.Ctx, msgs []entry, last uint64) {
	var b strings.Builder
	b.WriteString(`{"messages":[`)
	for i, e := range msgs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e.json)
	}
	b.WriteString(`],"last":`)
	b.WriteString(strconv.FormatUint(last, 10))
	b.WriteString("}\n")
	c.SetHeader("Content-Type", "application/json")
	c.SetHeader("Cache-Control", "no-store")
	c.WriteString(b.String())
}

// events handles GET /events: the topic as Server-Sent Events, each message as "id: <seq>" and
// "data: <message JSON>", from after the Last-Event-ID header (or the after parameter) when
// there is one, else from now. Sequence numbers are the stream's, so a client reconnecting to
// another instance resumes where it was. One message is written at a time: Write parks the
// handler while a slow client has the high-water mark unread, so the stream goes at the
// client's pace and its buffer stays bounded.
func (ch *chat) events(c *core.Ctx) {
	cursor := ch.topic.Last()
	if v, ok := c.LookupHeader("Last-Event-ID"); ok {
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
			cursor = n
		}
	} else if n, ok := queryUint(c, "after", cursor); ok {
		cursor = n
	}
	c.SetHeader("Content-Type", "text/event-stream")
	c.SetHeader("Cache-Control", "no-store")
	c.WriteString("retry: 2000\n\n")
	if c.Flush() != nil {
		return
	}
	var line []byte
	for {
		msgs, last, err := ch.topic.Next(c, cursor, eventsPing)
		switch err {
		case nil, wait.ErrMissed:
		case wait.ErrTimeout:
			c.WriteString(": ping\n\n")
			if c.Flush() != nil {
				return
			}
			continue
		default:
			// The client left, a shutdown began, or NATS cannot give the history: the client
			// reconnects with its Last-Event-ID, maybe to another instance.
			return
		}
		for _, e := range msgs {
			line = append(line[:0], "id: "...)
			line = strconv.AppendUint(line, e.seq, 10)
			line = append(line, "\ndata: "...)
			line = append(line, e.json...)
			line = append(line, "\n\n"...)
			if _, err := c.Write(line); err != nil {
				return
			}
			if c.Flush() != nil {
				return
			}
		}
		cursor = last
	}
}

// queryUint parses the query parameter name as a non-negative integer; def when it is absent.
func queryUint(c *core.Ctx, name string, def uint64) (uint64, bool) {
	v, ok := c.LookupQuery(name)
	if !ok {
		return def, true
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return n, err == nil
}

// fail answers an error as JSON.
func fail(c *core.Ctx, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	c.SetStatus(status)
	c.SetHeader("Content-Type", "application/json")
	c.Write(append(b, '\n'))
}
