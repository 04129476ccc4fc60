package http1

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestRejectsOnTheWire checks each refusal's status, its Connection: close, and the close.
func TestRejectsOnTheWire(t *testing.T) {
	var mu sync.Mutex
	var ran []string
	_, addr := startServer(t, func(c *serve.Ctx) {
		mu.Lock()
		ran = append(ran, strings.Clone(c.Target()))
		mu.Unlock()
	}, serve.Options{MaxHeaderBytes: 4 << 10, MaxBodyBytes: 1000})
	long := strings.Repeat("a", 5<<10)
	tests := []struct {
		name, raw string
		status    int
	}{
		{"malformed line", "GET\r\n\r\n", 400},
		{"missing host", "GET / HTTP/1.1\r\n\r\n", 400},
		{"space before colon", "GET / HTTP/1.1\r\nHost : h\r\n\r\n", 400},
		{"obs-fold", "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n", 400},
		{"TE and CL", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc", 400},
		{"bad CL", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1x\r\n\r\n", 400},
		{"unknown coding", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: br, chunked\r\n\r\n0\r\n\r\n", 501},
		{"version", "GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505},
		{"long target", "GET /" + long + " HTTP/1.1\r\nHost: h\r\n\r\n", 414},
		{"long header", "GET / HTTP/1.1\r\nHost: h\r\nX: " + long + "\r\n\r\n", 431},
		{"expectation", "GET / HTTP/1.1\r\nHost: h\r\nExpect: nothing\r\n\r\n", 417},
		// RFC 3986: a URI is ASCII, and a client never sends the fragment.
		{"raw UTF-8 in target", "GET /caf\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"fragment in target", "GET /a#b HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		// RFC 9110 §4.2.1, RFC 9112 §3.2: an origin-form target's authority is Host's.
		{"empty host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", 400},
		{"empty host in 1.0", "GET / HTTP/1.0\r\nHost: \r\n\r\n", 400},
		{"empty host, asterisk", "OPTIONS * HTTP/1.1\r\nHost:\r\n\r\n", 400},
		// A method too long for the head's limit is not a long target, and no method at all:
		// the line is malformed (a method that is merely unknown is the handler's to answer).
		{"long method", strings.Repeat("M", 5<<10) + " / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"100,000-byte method", strings.Repeat("M", 100_000) + " / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"long bad method", strings.Repeat("M", 10) + "(" + long + " / HTTP/1.1\r\nHost: h\r\n\r\n", 400},
		{"CONNECT", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 501},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, addr)
			// A valid request first: the refusal must come after its response, in order.
			c.Send("GET /before HTTP/1.1\r\nHost: h\r\n\r\n" + tt.raw + "GET /after HTTP/1.1\r\nHost: h\r\n\r\n")
			if resp, _ := c.Response("GET"); resp.StatusCode != 200 {
				t.Fatalf("first response %d", resp.StatusCode)
			}
			resp, body := c.Response("GET")
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d (%q), want %d", resp.StatusCode, body, tt.status)
			}
			if !resp.Close {
				t.Fatal("refusal without Connection: close")
			}
			c.ExpectEOF()
		})
	}
	mu.Lock()
	defer mu.Unlock()
	for _, target := range ran {
		if target != "/before" {
			t.Errorf("handler ran for %q", target)
		}
	}
}

func TestHeaderTimeout(t *testing.T) {
	_, addr := startServer(t, helloHandler, serve.Options{HeaderTimeout: 300 * time.Millisecond})
	// The timeout counts from the connection (the loop's clock then is no older than this).
	start := time.Now()
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHo")
	resp, _ := c.Response("GET")
	if resp.StatusCode != 408 {
		t.Fatalf("status %d, want 408", resp.StatusCode)
	}
	c.ExpectEOF()
	// Not before the timeout; and before the 10 s default, so that it was the 300 ms asked
	// for that cut it. No loaded machine is late by seconds on a timer.
	if d := time.Since(start); d < 250*time.Millisecond || d >= serve.DefaultHeaderTimeout/2 {
		t.Fatalf("cut after %v, want about 300ms", d)
	}
}

// TestSlowlorisCut trickles a header slower than the header timeout allows: the timeout counts
// from the head's first byte, not from the last, so the client is cut although it never stops
// sending. (Were each byte to restart the timeout, the head would go on until the test's own
// patience ran out.)
func TestSlowlorisCut(t *testing.T) {
	_, addr := startServer(t, helloHandler, serve.Options{HeaderTimeout: 400 * time.Millisecond})
	c := dial(t, addr)
	go func() {
		c.Write([]byte("GET / HTTP/1.1\r\nHost: h\r\nX-A: "))
		for {
			if _, err := c.Write([]byte{'b'}); err != nil {
				return // cut
			}
			time.Sleep(50 * time.Millisecond) // pacing: a byte well within every timeout
		}
	}()
	resp, _ := c.Response("GET")
	if resp.StatusCode != 408 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestIdleTimeout(t *testing.T) {
	_, addr := startServer(t, helloHandler, serve.Options{IdleTimeout: 300 * time.Millisecond})
	c := dial(t, addr)
	// The idle time counts from the response, whose time on the loop's clock is no older than
	// the request's.
	start := time.Now()
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	c.ExpectEOF()
	// Not before the timeout; and long before the 60 s default, so that it was the 300 ms
	// asked for that closed it.
	if d := time.Since(start); d < 250*time.Millisecond || d >= serve.DefaultIdleTimeout/2 {
		t.Fatalf("idle connection closed after %v, want about 300ms", d)
	}
}

// TestIdleTimeoutRestartsPerRequest checks that the idle deadline moves with each request: a
// connection used more often than the timeout stays open for longer than it. The requests come
// every few milliseconds; a correct server closes the connection only after a pause of a whole
// second, which no loaded machine makes between two lines of a loop.
func TestIdleTimeoutRestartsPerRequest(t *testing.T) {
	const idle = time.Second
	_, addr := startServer(t, helloHandler, serve.Options{IdleTimeout: idle})
	c := dial(t, addr)
	for start := time.Now(); time.Since(start) < 2*idle; {
		c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		if _, body := c.Response("GET"); body != "Hello World" {
			t.Fatal(body)
		}
		time.Sleep(10 * time.Millisecond) // pacing, not synchronisation
	}
}
