package middleware_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/router"
)

// writes records each Write the handler makes, whole.
type writes struct {
	mu  sync.Mutex
	got [][]byte
	ch  chan struct{} // a value per write
	err error
}

func newWrites() *writes { return &writes{ch: make(chan struct{}, 64)} }

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.got = append(w.got, bytes.Clone(p))
	w.mu.Unlock()
	w.ch <- struct{}{}
	return len(p), w.err
}

func (w *writes) all() [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.got
}

var at = time.Date(2026, 12, 1, 16, 0, 25, 123456789, time.UTC)

// record is a record of time at, with an attribute of each common kind.
func record(msg string) slog.Record {
	r := slog.NewRecord(at, slog.LevelWarn, msg, 0)
	r.AddAttrs(slog.String("s", "a\"b\n"), slog.Int("n", -3), slog.Duration("d", time.Second),
		slog.Group("g", slog.Bool("ok", true)), slog.Any("list", []int{1, 2}))
	return r
}

// TestLogHandlerBuffers: lines wait in the buffer until Flush, and then go out in one write,
// in order, each exactly as slog's JSONHandler writes it.
func TestLogHandlerBuffers(t *testing.T) {
	w := newWrites()
	h := middleware.LogOptions{FlushInterval: time.Hour}.NewHandler(w)
	var want bytes.Buffer
	std := slog.NewJSONHandler(&want, nil)
	for _, msg := range []string{"one", "two", "three"} {
		if err := h.Handle(context.Background(), record(msg)); err != nil {
			t.Fatal(err)
		}
		std.Handle(context.Background(), record(msg))
	}
	if got := w.all(); len(got) != 0 {
		t.Fatalf("written before Flush: %q", got)
	}
	if err := h.Flush(); err != nil {
		t.Fatal(err)
	}
	got := w.all()
	if len(got) != 1 || !bytes.Equal(got[0], want.Bytes()) {
		t.Fatalf("writes %q, want one of %q", got, want.Bytes())
	}
	h.Flush() // nothing held: no write
	if n := len(w.all()); n != 1 {
		t.Fatalf("%d writes after an empty Flush", n)
	}
}

// TestLogHandlerFull: a batch that reaches the buffer's size is written at once, whole lines
// only.
func TestLogHandlerFull(t *testing.T) {
	w := newWrites()
	h := middleware.LogOptions{BufferSize: 300, FlushInterval: time.Hour}.NewHandler(w)
	line := func() int {
		var b bytes.Buffer
		slog.NewJSONHandler(&b, nil).Handle(context.Background(), record("x"))
		return b.Len()
	}()
	perBatch := (300 + line - 1) / line // lines up to and including the one that fills it
	for range perBatch * 2 {
		h.Handle(context.Background(), record("x"))
	}
	got := w.all()
	if len(got) != 2 {
		t.Fatalf("%d writes of %d lines of %d bytes into 300, want 2", len(got), perBatch*2, line)
	}
	for _, b := range got {
		if len(b) != perBatch*line || !bytes.HasSuffix(b, []byte("\n")) {
			t.Fatalf("a write of %d bytes, want %d whole lines", len(b), perBatch)
		}
	}
}

// TestLogHandlerFlushInterval: a line reaches the writer by itself, FlushInterval after it was
// logged, with no Flush.
func TestLogHandlerFlushInterval(t *testing.T) {
	w := newWrites()
	h := middleware.LogOptions{FlushInterval: 20 * time.Millisecond}.NewHandler(w)
	slog.New(h).Info("first")
	<-w.ch
	slog.New(h).Info("second") // the timer is armed again for the next batch
	<-w.ch
	got := w.all()
	if len(got) != 2 || !bytes.Contains(got[0], []byte(`"msg":"first"`)) || !bytes.Contains(got[1], []byte(`"msg":"second"`)) {
		t.Fatalf("writes %q", got)
	}
}

// TestLogHandlerClose: Close writes what is held; lines after it are written at once, as are
// every line's of an unbuffered handler.
func TestLogHandlerClose(t *testing.T) {
	w := newWrites()
	h := middleware.LogOptions{FlushInterval: time.Hour}.NewHandler(w)
	slog.New(h).Info("held")
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	slog.New(h).Info("after")
	if got := w.all(); len(got) != 2 || !bytes.Contains(got[1], []byte("after")) {
		t.Fatalf("writes %q", got)
	}

	w = newWrites()
	h = middleware.LogOptions{BufferSize: -1}.NewHandler(w)
	slog.New(h).Info("a")
	slog.New(h).Info("b")
	if got := w.all(); len(got) != 2 {
		t.Fatalf("unbuffered: writes %q", got)
	}
}

// TestLogHandlerSlogOptions: NewLogHandler takes slog's own options, as slog.NewJSONHandler
// does: with Level Debug, debug records are logged, each line as slog's JSONHandler writes it.
func TestLogHandlerSlogOptions(t *testing.T) {
	var got, want bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	h := middleware.NewLogHandler(&got, opts)
	if !h.Enabled(context.Background(), slog.LevelDebug) {
		t.Fatal("debug records not enabled")
	}
	r := record("details")
	r.Level = slog.LevelDebug
	if err := h.Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if err := h.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := slog.NewJSONHandler(&want, opts).Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("line %q, slog's %q", got.String(), want.String())
	}
	if middleware.NewLogHandler(&got, nil).Enabled(context.Background(), slog.LevelDebug) {
		t.Fatal("debug records enabled by default")
	}
}

// TestLogHandlerError: the writer's error is Flush's to report.
func TestLogHandlerError(t *testing.T) {
	w := newWrites()
	w.err = errors.New("disk full")
	h := middleware.NewLogHandler(w, nil)
	slog.New(h).Info("lost")
	if err := h.Flush(); err == nil || err.Error() != "disk full" {
		t.Fatalf("Flush: %v", err)
	}
}

// TestAccessLogLogHandler: through a LogHandler the access log's lines carry what they carry
// through slog's JSONHandler; a line with attributes of the application's goes through slog,
// in order with the others; options that change slog's lines (ReplaceAttr) apply to the
// access log's too.
func TestAccessLogLogHandler(t *testing.T) {
	out := make(lines, 16)
	h := middleware.LogOptions{BufferSize: -1}.NewHandler(out)
	tag := func(next core.Handler) core.Handler {
		return func(c *core.Ctx) {
			if c.Path() == "/tagged" {
				middleware.AddLogAttrs(c, slog.String("user", "ada"))
			}
			next(c)
		}
	}
	_, addr := coretest.Serve(t, chain(logged, middleware.AccessLog(slog.New(h), middleware.LogUserAgent), middleware.AssignRequestID, tag), core.Options{})
	c := dialRaw(t, addr)
	for _, path := range []string{"/hello", "/tagged", "/missing"} {
		c.Send("GET " + path + " HTTP/1.1\r\nHost: h\r\nX-Request-Id: r-1\r\nUser-Agent: t/1\r\n\r\n")
		c.Response("GET")
		m := out.nextJSON(t)
		want := map[string]any{"level": "INFO", "msg": "request", "method": "GET", "path": path, "request_id": "r-1", "user_agent": "t/1"}
		for k, v := range want {
			if m[k] != v {
				t.Fatalf("%s: %s %v, want %v: %v", path, k, m[k], v, m)
			}
		}
		if _, err := time.Parse(time.RFC3339Nano, m["time"].(string)); err != nil {
			t.Fatalf("%s: time: %v", path, err)
		}
		if path == "/tagged" && m["user"] != "ada" {
			t.Fatalf("no attribute of the application's: %v", m)
		}
	}

	out = make(lines, 4)
	h = middleware.LogOptions{BufferSize: -1, HandlerOptions: slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == "time" || a.Key == "duration" {
				return slog.Attr{}
			}
			return a
		},
	}}.NewHandler(out)
	_, addr = coretest.Serve(t, chain(logged, middleware.AccessLog(slog.New(h))), core.Options{})
	c = dialRaw(t, addr)
	c.Send("GET /hello HTTP/1.1\r\nHost: h\r\n\r\n")
	c.Response("GET")
	want := `{"level":"INFO","msg":"request","method":"GET","path":"/hello","status":200,"bytes":5}` + "\n"
	if got := string(out.next(t)); got != want {
		t.Fatalf("line %q, want %q", got, want)
	}
}

// ExampleNewLogHandler: a service's log, with the access log's lines in it, buffered. Close,
// once the server has shut down, writes what is left. (Here a strings.Builder stands for
// stderr, and the time and duration are cut from the line.)
func ExampleNewLogHandler() {
	var stderr strings.Builder
	h := middleware.NewLogHandler(&stderr, nil)
	r := router.New()
	r.Use(middleware.AccessLog(slog.New(h)))
	r.GET("/hello", func(c *core.Ctx) { c.WriteString("hello") })
	url, stop := start(r.Handler())
	resp, _ := http.Get(url + "/hello")
	resp.Body.Close()
	stop()
	h.Close()

	line := stderr.String()
	line = line[strings.Index(line, `"level"`):]
	line = line[:strings.Index(line, `,"duration"`)] + "}"
	fmt.Println("{" + line)
	// Output: {"level":"INFO","msg":"request","method":"GET","path":"/hello","route":"/hello","status":200,"bytes":5}
}

// loudPanic is a panic value whose text is made by code that logs.
type loudPanic struct{ log *slog.Logger }

func (p loudPanic) String() string {
	p.log.Info("making the panic's text")
	return "loud"
}

// TestAccessLogErrorTextLogs: a response's error whose text comes from code that logs through
// the same LogHandler (a panic value's String method) does not hold up the loop: both lines
// are written, the access line with the error's text.
func TestAccessLogErrorTextLogs(t *testing.T) {
	var out strings.Builder
	var mu sync.Mutex
	h := middleware.NewLogHandler(lockedWriter{&mu, &out}, nil) // batched: the line goes straight in
	logger := slog.New(h)
	_, addr := coretest.Serve(t, chain(func(c *core.Ctx) { panic(loudPanic{logger}) }, middleware.AccessLog(logger)), core.Options{})
	c := dialRaw(t, addr)
	c.Send("GET /boom HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, _ := c.Response("GET"); resp.StatusCode != 500 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	coretest.WaitFor(t, "both lines logged", func() bool {
		if err := h.Flush(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		got := out.String()
		return strings.Contains(got, `"msg":"making the panic's text"`) && strings.Contains(got, `"error":"dwell: handler panicked: loud"`)
	})
}

// lockedWriter writes to w under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
