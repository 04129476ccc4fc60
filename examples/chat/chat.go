package main

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/wait"
	"github.com/google/uuid"
)

// Limits of the API.
const (
	history        = 1000             // messages kept for clients that come back with an old cursor
	maxText        = 4096             // bytes of text in a message
	maxBody        = 64 << 10         // bytes of a POST body: room for maxText escaped as \uXXXX
	defaultTimeout = 30 * time.Second // of a poll that names none
	maxTimeout     = 120 * time.Second
	eventsPing     = 25 * time.Second // a comment on an idle event stream, to notice a gone client
)

// A message as the API shows it.
type message struct {
	ID   string `json:"id"`
	Seq  uint64 `json:"seq"`
	Text string `json:"text"`
}

// An entry is a message as the topic keeps it: encoded once, when posted, so that answering a
// thousand polls costs no encoding and a slow event stream holds references, not copies.
type entry struct {
	seq  uint64
	json []byte
}

type chat struct {
	mu    sync.Mutex // serialises posts, so that a message knows its seq before it is published
	topic *wait.Topic[entry]
}

func newChat() *chat {
	return &chat{topic: wait.NewTopic[entry](history)}
}

// post handles POST /messages {"text": "..."}: 201 {"id", "seq"}; 400 for bad JSON or an empty
// text, 413 for a text over maxText bytes or a body over maxBody.
func (ch *chat) post(c *core.Ctx) {
	body, status := readBody(c, maxBody)
	if status != 0 {
		fail(c, status, "request body over 64 KiB")
		return
	}
	var in struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		fail(c, 400, "bad JSON: "+err.Error())
		return
	}
	switch {
	case in.Text == nil || *in.Text == "":
		fail(c, 400, `"text" must be a non-empty string`)
		return
	case len(*in.Text) > maxText:
		fail(c, 413, "text over 4096 bytes")
		return
	}
	m := message{ID: uuid.NewString(), Text: *in.Text}
	ch.mu.Lock()
	m.Seq = ch.topic.Last() + 1
	b, _ := json.Marshal(m)
	ch.topic.Publish(entry{m.Seq, b})
	ch.mu.Unlock()

	c.SetStatus(201)
	c.SetHeader("Content-Type", "application/json")
	c.WriteString(`{"id":"` + m.ID + `","seq":` + strconv.FormatUint(m.Seq, 10) + "}\n")
}

// readBody reads the request body, refusing one over limit bytes with 413 (at once when its
// Content-Length says so) and a broken one with 400. The buffer grows only with bytes received.
func readBody(c *core.Ctx, limit int) ([]byte, int) {
	if c.ContentLength() > int64(limit) {
		return nil, 413
	}
	buf := make([]byte, 0, 512)
	if n := c.ContentLength(); n >= 0 {
		buf = make([]byte, 0, n+1) // +1: room to see the end without growing
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := c.ReadBody(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case len(buf) > limit || errors.Is(err, core.ErrBodyTooLarge):
			return nil, 413
		case err == io.EOF:
			return buf, 0
		case err != nil:
			return nil, 400
		}
	}
}

// poll handles GET /messages?after=N&timeout=MS: the messages after N at once, or the next ones
// when they come, or none when the timeout passes (default 30 s, at most 120 s; 0 does not
// wait). The answer's last is the cursor for the next poll.
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
	if err == wait.ErrClosed {
		return // the client left
	}
	// Messages, or none when the timeout passed or a shutdown began: the client polls again
	// with last, here or at another instance.
	writeMessages(c, msgs, last)
}

// next waits for the messages after the cursor. A parked request's stack holds the frames of
// the functions it is parked in, so this one, in the middle, is kept small: what comes before
// and after the wait lives in poll and writeMessages.
func (ch *chat) next(c *core.Ctx, after uint64, timeout time.Duration) ([]entry, uint64, error) {
	if timeout == 0 {
		return ch.topic.Since(after)
	}
	return ch.topic.Next(c, after, timeout)
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
// there is one, else from now. One message is written at a time: Write parks the handler while
// a slow client has the high-water mark unread, so the stream goes at the client's pace and its
// buffer stays bounded.
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
