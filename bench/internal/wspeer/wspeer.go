// Package wspeer holds what every WebSocket benchmark server shares, so that the servers differ
// only in how they serve WebSocket: the command line, the routes they answer and the broadcast
// schedule with its time-stamped payload, which the load tool (cmd/load, ws-bcast) reads back.
//
// Every server answers, on one CPU:
//
//   - GET /hello: 200 "Hello World" (the driver waits for it before measuring);
//   - GET /echo: a WebSocket upgrade without compression; every message is sent back as it came;
//   - GET /echo-deflate: the same with permessage-deflate accepted, without context takeover
//     where the library lets the server choose (see each server's doc);
//   - GET /broadcast: a WebSocket upgrade that joins the broadcast; what the client sends is
//     read and dropped;
//   - GET /start?ticks=N&interval=D&size=B: starts a broadcast of N binary messages of B bytes,
//     one every D, to every connection joined, and answers 200 at once (see Plan).
package wspeer

import (
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"net/http"
	_ "net/http/pprof" // for -debug: on http.DefaultServeMux, which no server routes to

	"strconv"
	"time"
)

// Hello is the body of GET /hello.
const Hello = "Hello World"

// ParseFlags parses -addr (default 127.0.0.1:8080), -debug and whatever flags the server
// registered on flag.CommandLine before the call, and returns the address. -debug ADDR serves
// net/http/pprof on a listener of its own, for profiles taken by hand; the driver never sets it,
// and the servers' routes never reach it.
func ParseFlags() string {
	addr := flag.String("addr", "127.0.0.1:8080", "TCP address to listen on")
	debug := flag.String("debug", "", "`address` to serve net/http/pprof on (for profiles taken by hand)")
	flag.Parse()
	if *debug != "" {
		go func() { log.Println(http.ListenAndServe(*debug, nil)) }()
	}
	return *addr
}

// HeaderSize is where a broadcast payload's filler starts: the tick's number (uint64, big
// endian) and the time it was sent (Unix nanoseconds, int64, big endian) come first.
const HeaderSize = 16

// A Plan is one broadcast: Ticks messages of Size bytes, one every Interval.
type Plan struct {
	Ticks    int
	Interval time.Duration
	Size     int
}

// ParsePlan reads a plan from GET /start's query parameters, through get (a request's query
// lookup). It refuses what the load tool would not send, so that a typo fails loudly.
func ParsePlan(get func(string) string) (Plan, error) {
	var p Plan
	var err error
	if p.Ticks, err = strconv.Atoi(get("ticks")); err != nil || p.Ticks <= 0 || p.Ticks > 10000 {
		return p, fmt.Errorf("ticks must be in 1..10000, got %q", get("ticks"))
	}
	if p.Interval, err = time.ParseDuration(get("interval")); err != nil || p.Interval <= 0 {
		return p, fmt.Errorf("interval must be a positive duration, got %q", get("interval"))
	}
	if p.Size, err = strconv.Atoi(get("size")); err != nil || p.Size < HeaderSize || p.Size > 1<<20 {
		return p, fmt.Errorf("size must be in %d..%d, got %q", HeaderSize, 1<<20, get("size"))
	}
	return p, nil
}

// Start runs the plan on a goroutine of its own and returns at once: at each tick, on the
// schedule of the first one (a late tick does not push the next ones back), it makes a fresh
// payload stamped with the tick's number and the time, and calls send with it. The payload is
// send's to keep: libraries that write asynchronously (gws, the per-connection writers of
// gorilla and coder) hold it after send returns.
func (p Plan) Start(send func(payload []byte)) {
	go func() {
		first := time.Now()
		for i := range p.Ticks {
			if d := time.Until(first.Add(time.Duration(i) * p.Interval)); d > 0 {
				time.Sleep(d)
			}
			send(Payload(p.Size, uint64(i), time.Now()))
		}
	}()
}

// Payload makes a broadcast message of size bytes: tick and sent in its header, the filler
// after it printable bytes (so that a library that checks text would pass it too).
func Payload(size int, tick uint64, sent time.Time) []byte {
	b := make([]byte, size)
	binary.BigEndian.PutUint64(b[0:8], tick)
	binary.BigEndian.PutUint64(b[8:16], uint64(sent.UnixNano()))
	for i := HeaderSize; i < size; i++ {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// Stamp reads a broadcast payload's header: the tick and when the server sent it.
func Stamp(b []byte) (tick uint64, sent int64, ok bool) {
	if len(b) < HeaderSize {
		return 0, 0, false
	}
	return binary.BigEndian.Uint64(b[0:8]), int64(binary.BigEndian.Uint64(b[8:16])), true
}

// QueueMessages is how many broadcast messages a server that keeps a queue per connection
// (a channel feeding a writer goroutine: gorilla, coder) lets wait for a client before it
// closes the connection as too slow, the way their chat examples do.
const QueueMessages = 64

// QueueBytes bounds the output a server waiting for a slow broadcast client may hold, where
// the library takes a bound in bytes (dwell's Options.MaxQueued, nbio's MaxWriteBufferSize):
// past it the connection is closed.
const QueueBytes = 64 << 10
