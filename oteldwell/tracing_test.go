package oteldwell_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/oteldwell"
	"github.com/dwellhttp/dwell/router"
	"github.com/dwellhttp/dwell/wait"
)

// newTracer returns a tracer provider whose spans a SpanRecorder keeps, sampling them all.
func newTracer() (*sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	sr := tracetest.NewSpanRecorder()
	return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr), sdktrace.WithSampler(sdktrace.AlwaysSample())), sr
}

// attrMap returns a span's attributes by key, as strings.
func attrMap(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// A seen is what a handler saw of its span.
type seen struct {
	span    trace.SpanContext // from c.Context()
	own     trace.SpanContext // from oteldwell.Span
	traceID string            // middleware.TraceID
}

// TestTracing: a span per request, named after its route, with the semantic conventions'
// attributes, continuing the caller's trace, in the handler's c.Context() and given to
// middleware.SetTraceID; its status Error for a 5xx and a panic, unset for a 404.
func TestTracing(t *testing.T) {
	tp, sr := newTracer()
	sig, done := signal()
	seenc := make(chan seen, 1)
	r := router.New()
	r.Use(oteldwell.Tracing(oteldwell.Options{TracerProvider: tp, Propagators: propagation.TraceContext{}}), sig)
	todoRoutes(r)
	r.GET("/seen/:id", func(c *core.Ctx) {
		seenc <- seen{trace.SpanFromContext(c.Context()).SpanContext(), oteldwell.Span(c).SpanContext(), middleware.TraceID(c)}
	})
	_, url := serve(t, r.Handler())

	const (
		traceID = "0af7651916cd43dd8448eb211c80319c"
		parent  = "b7ad6b7169203331"
	)
	do(t, "GET", url+"/seen/7?secret=1", "", "Traceparent", "00-"+traceID+"-"+parent+"-01", "User-Agent", "tester/1.0")
	coretest.Receive(t, "the response's end", done)
	s := coretest.Receive(t, "what the handler saw", seenc)

	ended := sr.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans", len(ended))
	}
	span := ended[0]
	if span.Name() != "GET /seen/:id" || span.SpanKind() != trace.SpanKindServer {
		t.Errorf("span %q of kind %v", span.Name(), span.SpanKind())
	}
	if got := span.SpanContext().TraceID().String(); got != traceID {
		t.Errorf("trace id %s, want the caller's %s", got, traceID)
	}
	if got := span.Parent().SpanID().String(); got != parent || !span.Parent().IsRemote() {
		t.Errorf("parent %s (remote %v), want the caller's %s", got, span.Parent().IsRemote(), parent)
	}
	if s.span.SpanID() != span.SpanContext().SpanID() || !s.own.Equal(s.span) || s.traceID != traceID {
		t.Errorf("the handler saw span %v, oteldwell.Span %v and trace id %q; the span is %v", s.span, s.own, s.traceID, span.SpanContext())
	}
	a := attrMap(span.Attributes())
	for k, v := range map[string]string{
		"http.request.method":       "GET",
		"url.path":                  "/seen/7",
		"url.scheme":                "http",
		"http.route":                "/seen/:id",
		"server.address":            "127.0.0.1",
		"client.address":            "127.0.0.1",
		"network.peer.address":      "127.0.0.1",
		"network.protocol.version":  "1.1",
		"user_agent.original":       "tester/1.0",
		"http.response.status_code": "200",
	} {
		if a[k] != v {
			t.Errorf("attribute %s %q, want %q", k, a[k], v)
		}
	}
	if a["server.port"] == "" || a["network.peer.port"] == "" {
		t.Errorf("no port in %v", a)
	}
	if _, ok := a["url.query"]; ok {
		t.Errorf("the query in %v", a)
	}
	if span.Status().Code != codes.Unset {
		t.Errorf("status %v", span.Status())
	}

	cases := []struct {
		method, path, name string
		status             codes.Code
		errType            string
	}{
		{"GET", "/nowhere", "GET", codes.Unset, ""},
		{"FROB", "/todos/1", "HTTP", codes.Unset, ""},
		{"GET", "/boom", "GET /boom", codes.Error, "500"},
		{"GET", "/panic", "GET /panic", codes.Error, "panic"},
	}
	for _, tc := range cases {
		sr.Reset()
		do(t, tc.method, url+tc.path, "")
		coretest.Receive(t, "the response's end", done)
		ended := sr.Ended()
		if len(ended) != 1 {
			t.Fatalf("%s %s: %d spans", tc.method, tc.path, len(ended))
		}
		span := ended[0]
		a := attrMap(span.Attributes())
		if span.Name() != tc.name || span.Status().Code != tc.status || a["error.type"] != tc.errType {
			t.Errorf("%s %s: span %q, status %v, error.type %q", tc.method, tc.path, span.Name(), span.Status(), a["error.type"])
		}
		if _, ok := a["http.route"]; ok != (tc.name != "GET" && tc.name != "HTTP") {
			t.Errorf("%s %s: http.route %q", tc.method, tc.path, a["http.route"])
		}
		if span.SpanContext().TraceID().String() == traceID || span.Parent().IsValid() {
			t.Errorf("%s %s: a span of the earlier trace, or with a parent", tc.method, tc.path)
		}
	}
	if a := attrMap(sr.Ended()[0].Attributes()); len(sr.Ended()[0].Events()) != 1 || a["http.response.status_code"] != "500" {
		t.Errorf("panic: events %v, attributes %v", sr.Ended()[0].Events(), a)
	}
}

// TestTracingAroundRouter: wrapped around the router's Handler, the middleware names the span
// after the route once the router has matched — also when the route's handler panics.
func TestTracingAroundRouter(t *testing.T) {
	tp, sr := newTracer()
	sig, done := signal()
	r := router.New()
	todoRoutes(r)
	_, url := serve(t, oteldwell.Tracing(oteldwell.Options{TracerProvider: tp})(sig(r.Handler())))
	for i, route := range []string{"/todos/:id", "/panic"} {
		do(t, "GET", url+strings.Replace(route, ":id", "3", 1), "")
		coretest.Receive(t, "the response's end", done)
		span := sr.Ended()[i]
		if a := attrMap(span.Attributes()); span.Name() != "GET "+route || a["http.route"] != route {
			t.Fatalf("span %q, attributes %v", span.Name(), a)
		}
	}
}

// TestTwoServices: a traced request through two dwell services carries one trace id: service
// A's handler calls service B over HTTP, off its loop (wait.Do), its span injected into the
// outgoing request from c.Context(); B's span is a child of A's.
func TestTwoServices(t *testing.T) {
	prop := propagation.TraceContext{}
	tpA, srA := newTracer()
	tpB, srB := newTracer()

	sigB, doneB := signal()
	b := router.New()
	b.Use(oteldwell.Tracing(oteldwell.Options{TracerProvider: tpB, Propagators: prop}), sigB)
	b.GET("/b/:id", func(c *core.Ctx) { c.WriteString("b" + c.Param("id")) })
	_, urlB := serve(t, b.Handler())

	sigA, doneA := signal()
	a := router.New()
	a.Use(oteldwell.Tracing(oteldwell.Options{TracerProvider: tpA, Propagators: prop}), sigA)
	a.GET("/a", func(c *core.Ctx) {
		ctx := c.Context() // carries the span; it may go to another goroutine
		var body []byte
		var callErr error
		err := wait.Do(c, func() {
			req, err := http.NewRequestWithContext(ctx, "GET", urlB+"/b/1", nil)
			if err != nil {
				callErr = err
				return
			}
			prop.Inject(ctx, propagation.HeaderCarrier(req.Header))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				callErr = err
				return
			}
			defer resp.Body.Close()
			body, callErr = io.ReadAll(resp.Body)
		})
		if err != nil || callErr != nil {
			c.SetStatus(502)
			return
		}
		c.WriteString("a then " + string(body))
	})
	_, urlA := serve(t, a.Handler())

	if status, body := do(t, "GET", urlA+"/a", ""); status != 200 || body != "a then b1" {
		t.Fatalf("%d %q", status, body)
	}
	coretest.Receive(t, "B's response's end", doneB)
	coretest.Receive(t, "A's response's end", doneA)
	spansA, spansB := srA.Ended(), srB.Ended()
	if len(spansA) != 1 || len(spansB) != 1 {
		t.Fatalf("%d spans in A, %d in B", len(spansA), len(spansB))
	}
	sa, sb := spansA[0], spansB[0]
	if sa.Name() != "GET /a" || sb.Name() != "GET /b/:id" {
		t.Errorf("spans %q and %q", sa.Name(), sb.Name())
	}
	if !sa.SpanContext().TraceID().IsValid() || sb.SpanContext().TraceID() != sa.SpanContext().TraceID() {
		t.Errorf("trace ids %s and %s", sa.SpanContext().TraceID(), sb.SpanContext().TraceID())
	}
	if sb.Parent().SpanID() != sa.SpanContext().SpanID() || !sb.Parent().IsRemote() || sa.Parent().IsValid() {
		t.Errorf("B's parent %v, A's span %v, A's parent %v", sb.Parent(), sa.SpanContext(), sa.Parent())
	}
}

// TestTracingHTTP2: a request on an HTTP/2 stream says network.protocol.version "2".
func TestTracingHTTP2(t *testing.T) {
	tp, sr := newTracer()
	sig, done := signal()
	r := router.New()
	r.Use(oteldwell.Tracing(oteldwell.Options{TracerProvider: tp}), sig)
	r.GET("/h2", func(c *core.Ctx) { c.WriteString(c.Proto()) })
	_, url := serve(t, r.Handler())
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(url + "/h2")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	coretest.Receive(t, "the response's end", done)
	ended := sr.Ended()
	if resp.ProtoMajor != 2 || len(ended) != 1 {
		t.Fatalf("%s, %d spans", resp.Proto, len(ended))
	}
	if v := attrMap(ended[0].Attributes())["network.protocol.version"]; v != "2" {
		t.Errorf("network.protocol.version %q, want 2", v)
	}
}
