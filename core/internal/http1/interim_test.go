package http1

import (
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/core/internal/wire"
)

// TestInterimResponse: a 1xx status goes out at once with the fields set so far, and the final
// response follows with its own status and fields (RFC 9110 §15.2).
func TestInterimResponse(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.SetHeader("Link", "</style.css>; rel=preload")
		c.SetStatus(103)
		c.SetHeader("X-Final", "yes")
		c.SetStatus(201)
		c.WriteString("created")
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	line, _ := c.R.ReadString('\n')
	if line != "HTTP/1.1 103 Early Hints\r\n" {
		t.Fatalf("first line %q, want the interim response", line)
	}
	var interim []string
	for {
		l, _ := c.R.ReadString('\n')
		if l == "\r\n" {
			break
		}
		interim = append(interim, strings.TrimSpace(l))
	}
	if strings.Join(interim, "|") != "Link: </style.css>; rel=preload" {
		t.Fatalf("interim fields %q", interim)
	}
	resp, body := c.Response("GET")
	if resp.StatusCode != 201 || body != "created" || resp.Header.Get("X-Final") != "yes" ||
		resp.Header.Get("Link") == "" {
		t.Fatalf("final response %d %q %v", resp.StatusCode, body, resp.Header)
	}
}

// TestNoInterimResponseToHTTP10: RFC 9110 §15.2: a server MUST NOT send a 1xx response to an
// HTTP/1.0 client.
func TestNoInterimResponseToHTTP10(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.SetStatus(103)
		c.Flush()
		c.WriteString("body")
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.0\r\n\r\n")
	line, _ := c.R.ReadString('\n')
	if line != "HTTP/1.1 200 OK\r\n" {
		t.Fatalf("first line %q, want the final response", line)
	}
}

// TestChunkFramingOutOfProportion: on the wire, a body whose chunk framing dwarfs its data is
// refused with 400 rather than read to its end.
func TestChunkFramingOutOfProportion(t *testing.T) {
	errs := make(chan error, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		buf := make([]byte, 4096)
		var err error
		for err == nil {
			_, err = c.ReadBody(buf)
		}
		errs <- err
	}, serve.Options{})
	c := dial(t, addr)
	c.Send("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
	go func() {
		chunk := "1;a=" + strings.Repeat("v", 4000) + "\r\nx\r\n"
		for range 2000 {
			if _, err := c.Write([]byte(chunk)); err != nil {
				return // refused: the server closed
			}
		}
	}()
	resp, _ := c.Response("POST")
	if resp.StatusCode != 400 {
		t.Fatalf("status %d, want 400", resp.StatusCode)
	}
	if err := <-errs; err != wire.ErrChunkExcess {
		t.Fatalf("handler read error %v, want %v", err, wire.ErrChunkExcess)
	}
}

// TestAllowCONNECT: with the option set, a CONNECT reaches the handler.
func TestAllowCONNECT(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.WriteString(c.Method() + " " + c.Target() + " " + c.Host())
	}, serve.Options{AllowCONNECT: true})
	c := dial(t, addr)
	c.Send("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
	if _, body := c.Response("GET"); body != "CONNECT example.com:443 example.com:443" {
		t.Fatalf("body %q", body)
	}
}
