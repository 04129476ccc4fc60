package main

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/wait"
	"github.com/dwellhttp/dwell/websocket"
)

// The feed over HTTP, beside gRPC on the same port: the same topic, the same numbers.
//
//	POST /messages               the body (text, at most maxText bytes) as a message: 201 {"seq": N}
//	GET  /messages?after=N       a long poll: {"messages": [...], "next": N} at once when some
//	                             came after N, else when the next one does, or none after
//	                             timeout (milliseconds, 30 s by default) or once a shutdown begins
//	GET  /messages/ws?after=N    a WebSocket following the topic: a text message of that same
//	                             JSON for each batch, one with none once caught up, one every
//	                             25 s with nothing new; a shutdown closes it with 1001

const (
	defaultPoll = 30 * time.Second
	maxPoll     = 120 * time.Second
	socketPing  = 25 * time.Second
)

// pollAnswer is what a poll, and each message of a socket, carries.
type pollAnswer struct {
	Messages []message `json:"messages"`
	Next     uint64    `json:"next"`
}

// rest serves the feed over HTTP.
type rest struct {
	log  *messageLog
	feed *websocket.Feed[message]
}

func newREST(log *messageLog) *rest {
	return &rest{log: log, feed: &websocket.Feed[message]{
		Topic: log.topic,
		// A function of its arguments alone, as a Feed needs: a message published while many
		// sockets wait is encoded once for all of them.
		Encode: func(b []byte, msgs []message, next uint64, _ error) []byte {
			out, _ := json.Marshal(pollAnswer{Messages: nonNil(msgs), Next: next})
			return append(b, out...)
		},
		Seq:       func(m message) uint64 { return m.Seq },
		CaughtUp:  true,
		Heartbeat: socketPing,
	}}
}

// publish handles POST /messages. The log writes a file: that runs on wait's worker pool, the
// handler parked meanwhile, never on the loop.
func (r *rest) publish(c *core.Ctx) {
	text, err := body.ReadAll(c, maxText)
	var be *body.Error
	switch {
	case errors.As(err, &be):
		middleware.JSONError(c, be.Status, be.Error())
		return
	case err != nil:
		return // the body broke on the wire: the server answers
	case len(text) == 0 || !utf8.Valid(text):
		middleware.JSONError(c, 400, "the body must be 1 to "+strconv.Itoa(maxText)+" bytes of UTF-8 text")
		return
	}
	seq, err := wait.Call(c, func(context.Context) (uint64, error) { return r.log.publish(string(text)) })
	if err != nil {
		middleware.JSONError(c, 500, "storing the message failed")
		return
	}
	body.WriteJSON(c, 201, struct {
		Seq uint64 `json:"seq"`
	}{seq})
}

// poll handles GET /messages. The wait is a continuation (Topic.OnNext): a waiting poll costs
// its connection and a few words, not a coroutine.
func (r *rest) poll(c *core.Ctx) {
	after, ok1 := queryUint(c, "after", 0)
	ms, ok2 := queryUint(c, "timeout", uint64(defaultPoll/time.Millisecond))
	if !ok1 || !ok2 {
		middleware.JSONError(c, 400, "after and timeout must be numbers")
		return
	}
	c.SetHeader("Cache-Control", "no-store")
	// Capped before it is multiplied, which a huge value would overflow.
	timeout := max(time.Duration(min(ms, uint64(maxPoll/time.Millisecond)))*time.Millisecond, time.Nanosecond)
	r.log.topic.OnNext(c, after, timeout, answerPoll)
}

// answerPoll writes a poll's answer: what came, or none when the wait timed out or a shutdown
// began; a 500 when the log could not be read.
func answerPoll(c *core.Ctx, msgs []message, next uint64, err error) {
	switch err {
	case nil, wait.ErrMissed, wait.ErrTimeout, wait.ErrShutdown:
	case wait.ErrClosed:
		return // the client left
	default:
		middleware.JSONError(c, 500, "reading the messages failed")
		return
	}
	body.WriteJSON(c, 200, pollAnswer{Messages: nonNil(msgs), Next: next})
}

// socket handles GET /messages/ws: the upgrade's request follows the topic, detached, so a
// socket waiting for the next message costs no goroutine and no coroutine (websocket.Feed).
func (r *rest) socket(c *core.Ctx) {
	after, ok := queryUint(c, "after", r.log.topic.Last())
	if !ok {
		middleware.JSONError(c, 400, "after must be a number")
		return
	}
	ws, err := websocket.Serve(c, &websocket.Options{MaxMessage: 1 << 10}, listenOnly)
	if err != nil {
		return // refused, and answered with the reason
	}
	r.feed.Follow(c, ws, after)
}

// listenOnly are the sockets' events: what a client sends is read and ignored.
var listenOnly = &websocket.Events{}

// queryUint parses the query parameter name as a number, def when it is absent; false when it
// is not a number.
func queryUint(c *core.Ctx, name string, def uint64) (uint64, bool) {
	v, ok := c.Bytes().Query(name)
	if !ok {
		return def, true
	}
	n, err := strconv.ParseUint(string(v), 10, 64)
	return n, err == nil
}

// nonNil makes none an empty JSON list rather than null.
func nonNil(msgs []message) []message {
	if msgs == nil {
		return []message{}
	}
	return msgs
}
