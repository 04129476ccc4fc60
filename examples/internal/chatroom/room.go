// Package chatroom is the room of examples/chat: a long-poll chat over a wait.Topic, with the
// same messages as Server-Sent Events, and the page of examples/internal/chatpage.
//
// The API:
//
//	POST /messages {"text", "name"}  201 {"id", "seq", "time"} (the name may be left out)
//	GET  /messages?after=N&timeout=MS  200 {"messages": [...], "last": N}
//	GET  /events  text/event-stream, from Last-Event-ID (or ?after=N), else from now
//
// A message is {"id", "seq", "name", "text", "time"}: id a UUID, seq its place in the room
// (1, 2, 3, ...), name the sender's (trimmed; absent when none or a blank one was given), time
// when the server took it (RFC 3339 in UTC, to the millisecond: "2025-01-02T15:04:05.123Z").
//
// A text must not be blank, and has at most 2048 characters and 4096 bytes in UTF-8; a name has
// at most 32 characters and no control characters (chatpage's limits, which the page applies
// too). Refusals are {"error": "..."}: 400 for bad JSON, a blank text or a bad name, 413 for a
// text or name over its limit or a body over 64 KiB.
package chatroom

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/examples/internal/chatpage"
	"github.com/dwellhttp/dwell/router"
	"github.com/dwellhttp/dwell/wait"
)

// Limits of the API besides those of a message (chatpage's).
const (
	history        = 1000             // messages kept for clients that come back with an old cursor
	maxBody        = 64 << 10         // bytes of a POST body: room for a text escaped as \uXXXX
	defaultTimeout = 30 * time.Second // of a poll that names none
	maxTimeout     = 120 * time.Second
	eventsPing     = 25 * time.Second // a comment on an idle event stream, to notice a gone client
)

// A message as the API shows it.
type message struct {
	ID   string `json:"id"`
	Seq  uint64 `json:"seq"`
	Name string `json:"name,omitempty"`
	Text string `json:"text"`
	Time string `json:"time"`
}

// An entry is a message as the topic keeps it: encoded once, when posted, so that answering a
// thousand polls costs no encoding and a slow event stream holds references, not copies.
type entry struct {
	seq  uint64
	json []byte
}

// A Room is one chat room, kept in memory: the last 1000 messages are there for clients that
// come back with an old cursor. Its methods may be called from any goroutine.
type Room struct {
	mu    sync.Mutex // serialises posts, so that a message knows its seq before it is published
	topic *wait.Topic[entry]
}

// New returns an empty room.
func New() *Room {
	return &Room{topic: wait.NewTopic[entry](history)}
}

// Handler routes the room's endpoints and its page (GET /).
func (rm *Room) Handler() core.Handler {
	r := router.New()
	r.GET("/", chatpage.Serve)
	r.POST("/messages", rm.post)
	r.GET("/messages", rm.poll)
	r.GET("/events", rm.events)
	return r.Handler()
}

// publish numbers m, stamps it with the time and adds it to the room.
func (rm *Room) publish(m message) message {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	m.Seq = rm.topic.Last() + 1
	m.Time = time.Now().UTC().Format(chatpage.TimeFormat)
	b, _ := json.Marshal(m)
	rm.topic.Publish(entry{m.Seq, b})
	return m
}

// poll handles GET /messages?after=N&timeout=MS: the messages after N at once, or the next ones
// when they come, or none when the timeout passes (default 30 s, at most 120 s; 0 does not
// wait). The answer's last is the cursor for the next poll.
func (rm *Room) poll(c *core.Ctx) {
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
	msgs, last, err := rm.next(c, after, timeout)
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
func (rm *Room) next(c *core.Ctx, after uint64, timeout time.Duration) ([]entry, uint64, error) {
	if timeout == 0 {
		return rm.topic.Since(after)
	}
	return rm.topic.Next(c, after, timeout)
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
func (rm *Room) events(c *core.Ctx) {
	cursor := rm.topic.Last()
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
		msgs, last, err := rm.topic.Next(c, cursor, eventsPing)
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
