package http1

import (
	"errors"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

var errRefusedForTest = errors.New("dwell: refused for the test")

// TestRefuse: a handler's refusal goes through the server's WriteRefusal — its body and fields,
// what the handler prepared dropped but for the fields that do not describe content — and the
// connection stays open; Done.Err stays nil, since the response went out whole.
func TestRefuse(t *testing.T) {
	dones := make(chan serve.Done, 8)
	_, addr := startServer(t, func(c *serve.Ctx) {
		c.OnDone(func(d serve.Done) { dones <- d })
		c.SetValue("id", "r-9")
		c.SetHeader("X-Request-Id", "r-9")
		c.SetHeader("Allow", "GET")
		c.SetHeader("Content-Type", "text/html")
		c.SetHeader("Cache-Control", "max-age=60")
		c.SetHeader("X-Refusal", "the handler's")
		c.WriteString("<p>prepared, then dropped</p>")
		if !c.Refuse(405, errRefusedForTest) {
			t.Error("Refuse reported false with a WriteRefusal")
		}
	}, serve.Options{WriteRefusal: jsonRefusal})
	const want = `{"status":405,"error":"dwell: refused for the test","id":"r-9"}`
	c := dial(t, addr)
	for _, method := range []string{"GET", "HEAD", "GET"} {
		c.Send(method + " / HTTP/1.1\r\nHost: h\r\n\r\n")
		resp, body := c.Response(method)
		wantBody := want
		if method == "HEAD" {
			wantBody = ""
		}
		if resp.StatusCode != 405 || body != wantBody || resp.ContentLength != int64(len(want)) || resp.Close {
			t.Fatalf("%s: %d %q, length %d, close %v", method, resp.StatusCode, body, resp.ContentLength, resp.Close)
		}
		h := resp.Header
		if h.Get("Content-Type") != "application/json" || h.Get("X-Request-Id") != "r-9" || h.Get("Allow") != "GET" ||
			h.Get("Cache-Control") != "" || len(h["X-Refusal"]) != 1 || h.Get("X-Refusal") != "405" {
			t.Errorf("%s: header %v", method, h)
		}
		d := receive(t, "the refusal's Done", dones)
		if d.Status != 405 || d.Err != nil {
			t.Errorf("%s: Done %d %v", method, d.Status, d.Err)
		}
	}
}

// TestRefuseDeclines: without a WriteRefusal, once the response has started, or when
// WriteRefusal panics, Refuse writes nothing and reports false, and the handler answers its
// own way.
func TestRefuseDeclines(t *testing.T) {
	answerOwnWay := func(c *serve.Ctx) {
		if c.Refuse(404, errRefusedForTest) {
			t.Error("Refuse reported true")
			return
		}
		c.SetStatus(404)
		c.WriteString("own way")
	}
	panicking := func(*serve.Refusal) { panic("in WriteRefusal") }
	logs := &logBuffer{}
	for _, tc := range []struct {
		name string
		o    serve.Options
		h    serve.Handler
		want string
	}{
		{"no WriteRefusal", serve.Options{}, answerOwnWay, "own way"},
		{"WriteRefusal panics", serve.Options{WriteRefusal: panicking, Logger: newTestLogger(logs)}, answerOwnWay, "own way"},
		{"started", serve.Options{WriteRefusal: jsonRefusal}, func(c *serve.Ctx) {
			c.WriteString("started ")
			c.Flush()
			if c.Refuse(404, errRefusedForTest) {
				t.Error("Refuse reported true after the response started")
			}
			c.WriteString("and went on")
		}, "started and went on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, addr := startServer(t, tc.h, tc.o)
			c := dial(t, addr)
			c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
			if _, body := c.Response("GET"); body != tc.want {
				t.Errorf("body %q, want %q", body, tc.want)
			}
		})
	}
	if !strings.Contains(logs.String(), "panic in WriteRefusal") {
		t.Errorf("the panic was not logged: %q", logs.String())
	}
}

// TestRefuseStatus: a status that is not a 4xx or 5xx panics, as a programming error.
func TestRefuseStatus(t *testing.T) {
	got := make(chan any, 4)
	_, addr := startServer(t, func(c *serve.Ctx) {
		func() {
			defer func() { got <- recover() }()
			c.Refuse(302, nil)
		}()
	}, serve.Options{WriteRefusal: jsonRefusal})
	c := dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	if v, _ := receive(t, "the panic", got).(string); !strings.Contains(v, "Refuse with status 302") {
		t.Errorf("panic %v", v)
	}
}
