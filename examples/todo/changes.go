package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/wait"
)

// Limits of the change feeds.
const (
	defaultPoll = 30 * time.Second  // a long poll's wait when it names none
	maxPoll     = 120 * time.Second // the longest a long poll may ask for
	eventsPing  = 25 * time.Second  // a comment on an idle event stream, to notice a gone client
)

// changesAnswer is the body of GET /todos/changes.
type changesAnswer struct {
	Changes []change `json:"changes"`
	Next    uint64   `json:"next"`
	// Missed says the cursor was older than the log: some changes are lost to this client,
	// which should read GET /todos again.
	Missed bool `json:"missed,omitempty"`
}

// changes handles GET /todos/changes?after=N&timeout=MS: the changes after sequence N at once,
// else the next ones as soon as they come, or none once the timeout passes — or as soon as a
// shutdown begins, so that the client polls again elsewhere. next is the cursor to poll with.
//
// The wait is a continuation (Topic.OnNext): a waiting poll costs its connection and a few
// words, not a coroutine, and the middleware still sees its real end — the access log says 200
// and how long it waited. A cursor older than the topic's memory is answered from the
// database, the handler parked meanwhile, never the loop.
func (a *app) changes(c *core.Ctx) {
	after, ok := queryUint(c, "after", 0)
	if !ok {
		fail(c, 400, "after must be a sequence number")
		return
	}
	ms, ok := queryUint(c, "timeout", uint64(defaultPoll/time.Millisecond))
	if !ok {
		fail(c, 400, "timeout must be a number of milliseconds")
		return
	}
	c.SetHeader("Cache-Control", "no-store")
	// timeout=0 is a wait that ends at once, rather than Topic.Since, which would read the
	// database on the loop for an old cursor.
	// Capped before it is multiplied, which a huge value would overflow.
	timeout := max(time.Duration(min(ms, uint64(maxPoll/time.Millisecond)))*time.Millisecond, time.Nanosecond)
	a.todos.changes.OnNext(c, after, timeout, a.answerPoll)
}

// answerChanges writes a poll's answer: what came, or nothing when the wait timed out or a
// shutdown began; a 500 when the log could not be read.
func (a *app) answerChanges(c *core.Ctx, msgs []change, next uint64, err error) {
	switch err {
	case nil, wait.ErrMissed, wait.ErrTimeout, wait.ErrShutdown:
	case wait.ErrClosed:
		return // the client left
	default:
		a.failed(c, 0, err)
		return
	}
	if msgs == nil {
		msgs = []change{}
	}
	body.WriteJSON(c, 200, changesAnswer{Changes: msgs, Next: next, Missed: err == wait.ErrMissed})
}

// events handles GET /todos/events: the changes as Server-Sent Events, "id: <seq>", "event:
// <op>", "data: <todo JSON>", from after the Last-Event-ID field (which a browser's EventSource
// sends when it reconnects) or the after parameter, else from now. A cursor older than the log
// gets an event "missed" first. One change is written at a time, and Write parks the handler
// while a slow client has not read the last ones, so the stream goes at the client's pace. The
// stream ends as soon as a shutdown begins; the client reconnects with its Last-Event-ID.
func (a *app) events(c *core.Ctx) {
	cursor := a.todos.changes.Last()
	if v, ok := c.Bytes().Header("Last-Event-ID"); ok {
		n, err := strconv.ParseUint(strings.TrimSpace(string(v)), 10, 64)
		if err != nil {
			fail(c, 400, "Last-Event-ID must be a sequence number")
			return
		}
		cursor = n
	} else if n, ok := queryUint(c, "after", cursor); ok {
		cursor = n
	} else {
		fail(c, 400, "after must be a sequence number")
		return
	}
	c.SetHeader("Content-Type", "text/event-stream")
	c.SetHeader("Cache-Control", "no-store")
	c.WriteString("retry: 2000\n\n")
	if c.Flush() != nil {
		return
	}
	var buf []byte
	for {
		msgs, next, err := a.todos.changes.Next(c, cursor, eventsPing)
		switch err {
		case nil:
		case wait.ErrMissed:
			buf = append(buf[:0], "event: missed\ndata: {}\n\n"...)
		case wait.ErrTimeout:
			buf = append(buf[:0], ": ping\n\n"...)
		default:
			if !ended(err) {
				a.logger.Error("reading the change log", "error", err.Error())
			}
			return // the client left, a shutdown began, or it reconnects with its Last-Event-ID
		}
		for _, m := range msgs {
			buf = appendEvent(buf, m)
		}
		if _, err := c.Write(buf); err != nil || c.Flush() != nil {
			return
		}
		buf = buf[:0]
		cursor = next
	}
}

// appendEvent appends one change as an event.
func appendEvent(b []byte, m change) []byte {
	data, _ := json.Marshal(m.Todo)
	b = append(b, "id: "...)
	b = strconv.AppendUint(b, m.Seq, 10)
	b = append(b, "\nevent: "...)
	b = append(b, m.Op...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// queryUint parses the query parameter name as a non-negative integer; def when it is absent.
func queryUint(c *core.Ctx, name string, def uint64) (uint64, bool) {
	v, ok := c.Bytes().Query(name)
	if !ok {
		return def, true
	}
	n, err := strconv.ParseUint(string(v), 10, 64)
	return n, err == nil
}
