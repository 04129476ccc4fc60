package jetstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"log"
	"strconv"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/router"
	"github.com/dwellhttp/dwell/wait"
	"github.com/dwellhttp/dwell/wait/jetstream"
	"github.com/nats-io/nats.go"
)

// A long poll shared by every instance of a service: POST /messages stores a message in the
// stream "events" (which exists already), GET /messages?after=N answers with what came after N
// or waits for it, whichever instance the message was posted to.
func Example() {
	nc, err := nats.Connect(nats.DefaultURL,
		nats.ReconnectBufSize(-1), // a failed publish is never sent later
		nats.MaxReconnects(-1))    // a server keeps trying
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	topic, err := jetstream.New(ctx, nc, jetstream.Config[string]{
		Stream:  "events",
		Subject: "events.messages",
		Decode:  func(_ uint64, data []byte) (string, error) { return string(data), nil },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer topic.Close()

	r := router.New()
	r.POST("/messages", func(c *core.Ctx) {
		text := []byte(c.Query("text"))
		ctx := c.Context()
		var seq uint64
		var perr error
		if err := wait.Do(c, func() { seq, perr = topic.Publish(ctx, text) }); err != nil {
			return // the client left
		}
		if perr != nil {
			c.SetStatus(503) // not stored: the client may try again
			return
		}
		c.SetStatus(201)
		c.WriteString(strconv.FormatUint(seq, 10))
	})
	r.GET("/messages", func(c *core.Ctx) {
		after, _ := strconv.ParseUint(c.Query("after"), 10, 64)
		msgs, last, err := topic.Next(c, after, 30*time.Second)
		switch {
		case errors.Is(err, jetstream.ErrUnavailable):
			c.SetStatus(503)
			return
		case err == wait.ErrClosed:
			return
		}
		c.SetHeader("Content-Type", "application/json")
		json.NewEncoder(c).Encode(map[string]any{"messages": msgs, "last": last})
	})
	log.Fatal(core.ListenAndServe("127.0.0.1:8080", r.Handler()))
}
