// Package chatapi holds what the chat examples' servers (examples/chat, examples/chatcluster)
// answer alike: a message and its encoding, the reading and checking of a post, the arguments
// and answer of a poll, the event stream, the WebSocket's frames (socket.go), and errors as
// JSON. Each server keeps its own topic and the handlers that wait on it.
//
// The API:
//
//	POST /messages {"text", "name"}  201 {"id", "seq", "time", "epoch"} (the name may be left out)
//	GET  /messages?after=N&timeout=MS  200 {"messages": [...], "last": N, "epoch": E}
//	GET  /events  text/event-stream, from Last-Event-ID (or ?after=N), else from now
//	GET  /ws?after=N  a WebSocket: the poll answers after N, then as messages come; posts (socket.go)
//
// A message is {"id", "seq", "name", "text", "time"}: id a UUID, seq its place in the room
// (1, 2, 3, ...), name the sender's (trimmed; absent when none or a blank one was given), time
// when the server took it (RFC 3339 in UTC, to the millisecond: "2025-01-02T15:04:05.123Z").
//
// The epoch names the history that seqs count in, and changes when the history starts again
// from 1: examples/chat keeps its room in memory, so each process has an epoch of its own (a
// random UUID); chatcluster's history is its JetStream stream, and its epoch the stream's
// creation time (RFC 3339, to the nanosecond), the same on every instance and through NATS
// restarts, new when the stream is deleted and created again. Epochs are compared for equality
// only. A cursor means nothing in another epoch: a client that sees the epoch change forgets its
// cursor and what it has shown, and reads the new history from after=0 (chatcluster answers a
// poll that was waiting on the old history so: the new epoch, no messages, last 0). An answer
// whose last is below the cursor asked with (wait.Topic and jetstream.Topic count a cursor ahead
// of the room as its last seq) means the same: the history the cursor came from is gone.
//
// A POST answer names the history that took the message (for chatcluster, as far as the
// instance knew: one that has not noticed the stream created again may name the old epoch for a
// message the new stream took). A message is in the history a client follows only if a poll
// brings it there. When the client starts following a new epoch, a message whose answer named
// another one and that has not come once the client has read the new history up to now (a poll
// that answers no messages) was lost with its history, as was one of the followed epoch whose
// seq the cursor passed without it: the client may send it again. An answer that names an
// epoch the client has not followed yet may come from a history that replaced the client's: the
// client polls at once, without waiting.
//
// The event stream begins with "retry: 2000" and the comment ": epoch E" (a comment, which
// every event-stream parser skips, so that the stream's events are messages alone); each
// message is then an event with "id: <seq>" and "data: <message JSON>". A client whose
// Last-Event-ID came from another epoch opens the stream again from after=0 (a new
// EventSource, which sends no Last-Event-ID). A stream ends when its history does
// (chatcluster's stream recreated), so that its client reconnects and is told the new epoch.
//
// A text must not be blank, and has at most 2048 characters and 4096 bytes in UTF-8; a name has
// at most 32 characters and no control characters (chatpage's limits, which the page applies
// too). Refusals are {"error": "..."}: 400 for bad JSON, a blank text or a bad name, 413 for a
// text or name over its limit or a body over 64 KiB.
package chatapi

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
	"github.com/google/uuid"
)

// Limits of the API besides those of a message (chatpage's).
const (
	MaxBody        = 64 << 10         // bytes of a POST body: room for a text escaped as \uXXXX
	DefaultTimeout = 30 * time.Second // of a poll that names none
	MaxTimeout     = 120 * time.Second
	EventsPing     = 25 * time.Second // a comment on an idle event stream, to notice a gone client
)

// A Message as the API shows it. A stored message may leave Seq out (0) when its store numbers
// it.
type Message struct {
	ID   string `json:"id"`
	Seq  uint64 `json:"seq,omitempty"`
	Name string `json:"name,omitempty"`
	Text string `json:"text"`
	Time string `json:"time"`
}

// An Entry is a message as a topic keeps it: encoded once, so that answering a thousand polls
// costs no encoding and a slow event stream holds references, not copies.
type Entry struct {
	Seq  uint64
	JSON []byte
}

// NewEntry encodes m, numbered seq.
func NewEntry(m Message, seq uint64) Entry {
	m.Seq = seq
	b, _ := json.Marshal(m) // strings only: it cannot fail
	return Entry{seq, b}
}

// ReadPost reads and checks the body of POST /messages and returns the message it asks for,
// with its id and time; it answers a refusal itself (400, 413) and returns false then. A body
// that breaks off or stalls is answered by the server (400, 408).
func ReadPost(c *core.Ctx) (Message, bool) {
	b, err := body.ReadAll(c, MaxBody)
	switch {
	case errors.Is(err, core.ErrBodyTooLarge):
		Fail(c, 413, fmt.Sprintf("request body over %d KiB", MaxBody>>10))
		return Message{}, false
	case err != nil:
		return Message{}, false
	}
	m, status, msg := ParsePost(b)
	if status != 0 {
		Fail(c, status, msg)
		return Message{}, false
	}
	return m, true
}

// ParsePost checks a post, the JSON {"text", "name"} of POST /messages's body or of a client's
// message on the WebSocket, and returns the message it asks for, with its id and time; or the
// status and reason of a refusal (400, 413), which the caller answers.
func ParsePost(b []byte) (m Message, status int, reason string) {
	var in struct {
		Text *string `json:"text"`
		Name string  `json:"name"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return Message{}, 400, "bad JSON: " + err.Error()
	}
	if in.Text == nil {
		return Message{}, 400, `"text" is missing`
	}
	name := chatpage.TrimName(in.Name)
	if status, msg := chatpage.Check(*in.Text, name); status != 0 {
		return Message{}, status, msg
	}
	return Message{ID: uuid.NewString(), Name: name, Text: *in.Text, Time: time.Now().UTC().Format(chatpage.TimeFormat)}, 0, ""
}

// WritePosted answers a post stored in the history of the given epoch: 201 {"id", "seq",
// "time", "epoch"}.
func WritePosted(c *core.Ctx, m Message, epoch string) {
	c.SetStatus(201)
	c.SetHeader("Content-Type", "application/json")
	c.WriteString(posted(m, epoch) + "\n")
}

// posted is the answer to a post: {"id", "seq", "time", "epoch"}.
func posted(m Message, epoch string) string {
	return `{"id":"` + m.ID + `","seq":` + strconv.FormatUint(m.Seq, 10) + `,"time":"` + m.Time +
		`","epoch":` + jsonString(epoch) + "}"
}

// PollArgs reads the cursor and the timeout of GET /messages?after=N&timeout=MS (default 30 s,
// at most 120 s; 0 does not wait); it answers 400 for a bad one and returns false then.
func PollArgs(c *core.Ctx) (after uint64, timeout time.Duration, ok bool) {
	if after, ok = queryUint(c, "after", 0); !ok {
		Fail(c, 400, "after must be a sequence number")
		return 0, 0, false
	}
	ms, ok := queryUint(c, "timeout", uint64(DefaultTimeout/time.Millisecond))
	if !ok {
		Fail(c, 400, "timeout must be a number of milliseconds")
		return 0, 0, false
	}
	// Capped before it is multiplied: a huge value would overflow into a negative duration,
	// which a wait takes for none at all.
	return after, time.Duration(min(ms, uint64(MaxTimeout/time.Millisecond))) * time.Millisecond, true
}

// WriteMessages answers a poll: the messages, last, the cursor of the next poll, and the epoch
// they belong to.
func WriteMessages(c *core.Ctx, msgs []Entry, last uint64, epoch string) {
	c.SetHeader("Content-Type", "application/json")
	c.SetHeader("Cache-Control", "no-store")
	c.Write(append(AppendAnswer(nil, msgs, last, epoch), '\n'))
}

// AppendAnswer appends the answer of a poll to b: {"messages": [...], "last": N, "epoch": E}.
// It is also what the WebSocket sends (see socket.go).
func AppendAnswer(b []byte, msgs []Entry, last uint64, epoch string) []byte {
	b = append(b, `{"messages":[`...)
	for i, e := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.JSON...)
	}
	b = append(b, `],"last":`...)
	b = strconv.AppendUint(b, last, 10)
	b = append(b, `,"epoch":`...)
	b = append(b, jsonString(epoch)...)
	return append(b, '}')
}

// Events answers GET /events: a comment that names the history's epoch (see the package doc),
// then the messages next gives as Server-Sent Events, each as "id: <seq>" and
// "data: <message JSON>", from after the Last-Event-ID header (or the after parameter) when
// there is one, else from now (last). next is a topic's Next. One message is written at a time:
// Write parks the handler while a slow client has the high-water mark unread, so the stream goes
// at the client's pace and its buffer stays bounded. It ends when the client leaves, a shutdown
// begins or next fails otherwise (the history ended, say); the client reconnects with its
// Last-Event-ID, to this server or another, and is told the epoch again.
func Events(c *core.Ctx, epoch string, last uint64, next func(*core.Ctx, uint64, time.Duration) ([]Entry, uint64, error)) {
	cursor := last
	if v, ok := c.Bytes().Header("Last-Event-ID"); ok {
		if n, err := strconv.ParseUint(strings.TrimSpace(string(v)), 10, 64); err == nil {
			cursor = n
		}
	} else if n, ok := queryUint(c, "after", cursor); ok {
		cursor = n
	}
	c.SetHeader("Content-Type", "text/event-stream")
	c.SetHeader("Cache-Control", "no-store")
	// The epoch is a comment: no event is dispatched for it, and a client's Last-Event-ID stays.
	c.WriteString("retry: 2000\n: epoch " + epoch + "\n\n")
	if c.Flush() != nil {
		return
	}
	var line []byte
	for {
		msgs, last, err := next(c, cursor, EventsPing)
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
			line = strconv.AppendUint(line, e.Seq, 10)
			line = append(line, "\ndata: "...)
			line = append(line, e.JSON...)
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
	v, ok := c.Bytes().Query(name)
	if !ok {
		return def, true
	}
	n, err := strconv.ParseUint(string(v), 10, 64)
	return n, err == nil
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string: it cannot fail
	return string(b)
}

// Fail answers an error as JSON: {"error": msg}.
func Fail(c *core.Ctx, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	c.SetStatus(status)
	c.SetHeader("Content-Type", "application/json")
	c.Write(append(b, '\n'))
}
