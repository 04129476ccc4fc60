package statuspage_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/statuspage"
)

// A site is a server with the status page at /status and "hello" everywhere else. done gets
// what each status request ended with (core.Ctx.OnDone), so that a test sees a stream end.
type site struct {
	s    *core.Server
	addr string
	done chan core.Done
}

// serve starts a site with loops loops. The page's handler needs the server, which exists
// only once it serves: the site's handler reads it through an atomic pointer.
func serve(t *testing.T, loops int, o statuspage.Options) *site {
	t.Helper()
	var page atomic.Pointer[core.Handler]
	st := &site{done: make(chan core.Done, 64)}
	st.s, st.addr = coretest.Serve(t, func(c *core.Ctx) {
		if c.Path() != "/status" {
			c.WriteString("hello")
			return
		}
		c.OnDone(func(d core.Done) {
			select {
			case st.done <- d:
			default: // a hook must not block; no test makes that many requests
			}
		})
		(*page.Load())(c)
	}, core.Options{Loops: loops})
	h := statuspage.Handler(st.s, o)
	page.Store(&h)
	return st
}

// get makes one request on a new connection, with the given Accept field (none when empty),
// and returns the response and its body.
func (st *site) get(t *testing.T, method, target, accept string) (*http.Response, string) {
	t.Helper()
	c := coretest.Dial(t, st.addr)
	req := method + " " + target + " HTTP/1.1\r\nHost: h\r\nConnection: close\r\n"
	if accept != "" {
		req += "Accept: " + accept + "\r\n"
	}
	c.Send(req + "\r\n")
	return c.Response(method)
}

// hello makes n requests to / on c, reading each answer.
func hello(t *testing.T, c *coretest.Conn, n int) {
	t.Helper()
	for range n {
		c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		if resp, body := c.Response("GET"); resp.StatusCode != 200 || body != "hello" {
			t.Fatalf("GET /: %d %q", resp.StatusCode, body)
		}
	}
}

// An eventReader reads the events of a stream.
type eventReader struct {
	t *testing.T
	r *bufio.Reader
}

// next returns the next event's name and data, skipping fields other than event and data
// (retry) and blocks of no data, and fails the test if the stream ends first.
func (er *eventReader) next() (name, data string) {
	er.t.Helper()
	for {
		line, err := er.r.ReadString('\n')
		if err != nil {
			er.t.Fatalf("reading the stream: %v", err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if data != "" {
				return name, data
			}
			name = ""
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if data != "" {
				er.t.Fatalf("an event of more than one data line: %q", line)
			}
			data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// snapshot returns the next event, which must be a snapshot.
func (er *eventReader) snapshot() statuspage.Snapshot {
	er.t.Helper()
	name, data := er.next()
	if name != "snapshot" {
		er.t.Fatalf("event %q, want snapshot", name)
	}
	var sn statuspage.Snapshot
	if err := json.Unmarshal([]byte(data), &sn); err != nil {
		er.t.Fatalf("event data %q: %v", data, err)
	}
	return sn
}

// openStream opens an event stream on a new connection and returns the connection, the
// response and a reader of its events.
func (st *site) openStream(t *testing.T, accept, target string) (*coretest.Conn, *http.Response, *eventReader) {
	t.Helper()
	c := coretest.Dial(t, st.addr)
	c.Send("GET " + target + " HTTP/1.1\r\nHost: h\r\nAccept: " + accept + "\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(coretest.Patience))
	resp, err := http.ReadResponse(c.R, &http.Request{Method: "GET"})
	if err != nil {
		t.Fatal(err)
	}
	return c, resp, &eventReader{t, bufio.NewReader(resp.Body)}
}
