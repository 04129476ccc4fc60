package statuspage_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/statuspage"
)

// The keys of the JSON shape, which machines rely on: a change here is a new Version.
var (
	snapshotKeys = []string{"loops", "memory", "time", "total", "version"}
	loopKeys     = []string{"accepted", "as_of", "bytes_in", "bytes_out", "conns", "longest_turn_seconds",
		"loop", "panics", "rates", "refused", "requests", "stale", "stalls", "stopped", "tls", "turns"}
	connsKeys = []string{"closing", "continuations", "handed_over", "http2", "idle", "open", "parked",
		"parked_streams", "reading", "running", "streams", "tls", "tls_handshaking", "working", "writing"}
	refusedKeys = []string{"bad_request", "content_too_large", "expectation_failed", "header_fields_too_large",
		"not_implemented", "other", "request_timeout", "total", "unavailable", "uri_too_long", "version_not_supported"}
	tlsKeys    = []string{"handshake_failures", "handshakes", "handshakes_abandoned"}
	memoryKeys = []string{"gc_cycles", "goroutines", "heap_goal_bytes", "heap_object_bytes", "heap_objects", "total_bytes"}
	ratesKeys  = []string{"accepted_per_second", "bytes_in_per_second", "bytes_out_per_second", "refused_per_second",
		"requests_per_second", "seconds", "stalls_per_second", "tls_handshakes_per_second"}
)

// checkKeys fails the test unless the JSON object m has exactly the keys want.
func checkKeys(t *testing.T, what string, m any, want []string) {
	t.Helper()
	obj, ok := m.(map[string]any)
	if !ok {
		t.Fatalf("%s is %T, want an object", what, m)
	}
	if got := slices.Sorted(maps.Keys(obj)); !slices.Equal(got, want) {
		t.Errorf("%s has keys %q, want %q", what, got, want)
	}
}

// checkLoopShape checks the keys of a loop object, and of its rates when they are not null.
func checkLoopShape(t *testing.T, what string, l any) {
	t.Helper()
	checkKeys(t, what, l, loopKeys)
	obj, _ := l.(map[string]any)
	checkKeys(t, what+".conns", obj["conns"], connsKeys)
	checkKeys(t, what+".refused", obj["refused"], refusedKeys)
	checkKeys(t, what+".tls", obj["tls"], tlsKeys)
	if r := obj["rates"]; r != nil {
		checkKeys(t, what+".rates", r, ratesKeys)
	}
}

// TestJSON checks the JSON answer's shape, and its values after known traffic: requests on
// one connection kept idle, a malformed request the server refuses, and the snapshot's own.
func TestJSON(t *testing.T) {
	st := serve(t, 2, statuspage.Options{})
	idle := coretest.Dial(t, st.addr)
	hello(t, idle, 3)
	bad := coretest.Dial(t, st.addr)
	bad.Send("GET / HTTP/1.1\r\nHost h\r\n\r\n") // no colon: 400
	if resp, _ := bad.Response("GET"); resp.StatusCode != 400 {
		t.Fatalf("malformed request: %d", resp.StatusCode)
	}
	bad.Close() // the server closes it at once, rather than after lingering for more input
	coretest.WaitFor(t, "the refused connection closed", func() bool { return st.s.Stats().Total.Conns.Open == 1 })

	for _, how := range []struct{ target, accept string }{
		{"/status?format=json", ""},
		{"/status", "application/json"},
	} {
		t.Run(how.target+" "+how.accept, func(t *testing.T) {
			// The connection of the run before closes after its answer, lingering a moment.
			coretest.WaitFor(t, "one connection left", func() bool { return st.s.Stats().Total.Conns.Open == 1 })
			before := st.s.Stats().Total
			resp, body := st.get(t, "GET", how.target, how.accept)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			checkCommonHeaders(t, resp.Header)

			var raw map[string]any
			if err := json.Unmarshal([]byte(body), &raw); err != nil {
				t.Fatal(err)
			}
			checkKeys(t, "the snapshot", raw, snapshotKeys)
			checkLoopShape(t, "total", raw["total"])
			checkKeys(t, "memory", raw["memory"], memoryKeys)
			loops, _ := raw["loops"].([]any)
			if len(loops) != 2 {
				t.Fatalf("%d loops, want 2", len(loops))
			}
			for i, l := range loops {
				checkLoopShape(t, "loops["+strconv.Itoa(i)+"]", l)
			}

			var sn statuspage.Snapshot
			if err := json.Unmarshal([]byte(body), &sn); err != nil {
				t.Fatal(err)
			}
			tot := sn.Total
			if sn.Version != statuspage.Version || tot.Loop != -1 || tot.Stale || tot.Stopped || tot.Rates != nil {
				t.Errorf("version %d, total's loop %d, stale %v, stopped %v, rates %v",
					sn.Version, tot.Loop, tot.Stale, tot.Stopped, tot.Rates)
			}
			// This request's own connection is working (its handler waits for a goroutine
			// of wait's to take the snapshot); the one that made the hellos is idle.
			if want := (statuspage.Conns{Open: 2, Idle: 1, Working: 1}); tot.Conns != want {
				t.Errorf("connections %+v, want %+v", tot.Conns, want)
			}
			if tot.Requests != before.Requests+1 || tot.Accepted != before.Accepted+1 {
				t.Errorf("requests %d, accepted %d; before the request %d and %d",
					tot.Requests, tot.Accepted, before.Requests, before.Accepted)
			}
			want := statuspage.Refusals{Total: 1, BadRequest: 1}
			if tot.Refused != want {
				t.Errorf("refusals %+v, want %+v", tot.Refused, want)
			}
			if tot.BytesIn <= 0 || tot.BytesOut <= 0 || tot.Turns <= 0 || tot.AsOf.IsZero() || sn.Time.IsZero() {
				t.Errorf("bytes in %d, out %d, turns %d, as of %v, time %v", tot.BytesIn, tot.BytesOut, tot.Turns, tot.AsOf, sn.Time)
			}
			var sum statuspage.Loop
			for i, l := range sn.Loops {
				if l.Loop != i || l.Stale || l.Rates != nil {
					t.Errorf("loop %d: number %d, stale %v, rates %v", i, l.Loop, l.Stale, l.Rates)
				}
				sum.Requests += l.Requests
				sum.Accepted += l.Accepted
				sum.Conns.Open += l.Conns.Open
				sum.Refused.Total += l.Refused.Total
			}
			if sum.Requests != tot.Requests || sum.Accepted != tot.Accepted ||
				sum.Conns.Open != tot.Conns.Open || sum.Refused.Total != tot.Refused.Total {
				t.Errorf("the loops sum to %+v, the total is %+v", sum, tot)
			}
			m := sn.Memory
			if m.TotalBytes == 0 || m.HeapObjectBytes == 0 || m.HeapObjects == 0 || m.HeapGoalBytes == 0 || m.Goroutines == 0 {
				t.Errorf("memory %+v", m)
			}
		})
	}
}

// checkCommonHeaders checks the fields every answer has.
func checkCommonHeaders(t *testing.T, h map[string][]string) {
	t.Helper()
	get := func(k string) string { return strings.Join(h[k], ", ") }
	if get("Cache-Control") != "no-store" || get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("Cache-Control %q, X-Content-Type-Options %q", get("Cache-Control"), get("X-Content-Type-Options"))
	}
}

// TestPage checks the HTML page, its assets, and their fields: a strict Content Security Policy
// that allows the script and style the page names.
func TestPage(t *testing.T) {
	st := serve(t, 1, statuspage.Options{})
	browser := "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
	resp, page := st.get(t, "GET", "/status", browser)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	checkCommonHeaders(t, resp.Header)
	csp := resp.Header.Get("Content-Security-Policy")
	for _, d := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'",
		"frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, d) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, d)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Errorf("Content-Security-Policy %q allows something unsafe", csp)
	}
	for _, want := range []string{`<script src="?asset=app.js"`, `href="?asset=style.css"`, `id="open"`, `id="chart"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Errorf("the page names another origin")
	}

	for _, a := range []struct{ name, typ, has string }{
		{"app.js", "text/javascript; charset=utf-8", "EventSource"},
		{"style.css", "text/css; charset=utf-8", "#chart"},
	} {
		resp, body := st.get(t, "GET", "/status?asset="+a.name, "")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != a.typ || !strings.Contains(body, a.has) {
			t.Errorf("%s: %d %q, %d bytes", a.name, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
		checkCommonHeaders(t, resp.Header)
	}
	if strings.Contains(assetText(t, st, "app.js"), "innerHTML") {
		t.Error("the script uses innerHTML")
	}
	if resp, _ := st.get(t, "GET", "/status?asset=secret.txt", ""); resp.StatusCode != 404 {
		t.Errorf("an unknown asset: %d", resp.StatusCode)
	}

	// HEAD: the page's head alone, with its length.
	resp, body := st.get(t, "HEAD", "/status", "")
	if resp.StatusCode != 200 || body != "" || resp.ContentLength != int64(len(page)) {
		t.Errorf("HEAD: %d, %d bytes, Content-Length %d (the page has %d)", resp.StatusCode, len(body), resp.ContentLength, len(page))
	}
}

func assetText(t *testing.T, st *site, name string) string {
	t.Helper()
	_, body := st.get(t, "GET", "/status?asset="+name, "")
	return body
}

// TestNegotiation checks which representation each Accept field and format parameter gets.
func TestNegotiation(t *testing.T) {
	st := serve(t, 1, statuspage.Options{})
	for _, tc := range []struct {
		target, accept string
		status         int
		typ            string
	}{
		{"/status", "", 200, "text/html; charset=utf-8"},
		{"/status", "*/*", 200, "text/html; charset=utf-8"},
		{"/status", "text/plain", 200, "text/html; charset=utf-8"},
		{"/status", "application/json", 200, "application/json"},
		{"/status", "Application/JSON; charset=utf-8", 200, "application/json"},
		{"/status", "text/html;q=0.5, application/json", 200, "application/json"},
		{"/status", "text/html, application/json;q=0.9", 200, "text/html; charset=utf-8"},
		{"/status", "application/json;q=0", 200, "text/html; charset=utf-8"},
		{"/status?format=html", "application/json", 200, "text/html; charset=utf-8"},
		{"/status?format=json", "text/html", 200, "application/json"},
		{"/status?format=xml", "", 400, "text/plain; charset=utf-8"},
	} {
		resp, _ := st.get(t, "GET", tc.target, tc.accept)
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != tc.typ {
			t.Errorf("GET %s, Accept %q: %d %q, want %d %q", tc.target, tc.accept,
				resp.StatusCode, resp.Header.Get("Content-Type"), tc.status, tc.typ)
		}
	}
	// A stream asked for with HEAD is its head alone.
	resp, body := st.get(t, "HEAD", "/status", "text/event-stream")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || body != "" {
		t.Errorf("HEAD of the stream: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

// TestMethodNotAllowed checks that methods other than GET and HEAD get 405 with Allow, and the
// Cache-Control and X-Content-Type-Options every answer has.
func TestMethodNotAllowed(t *testing.T) {
	st := serve(t, 1, statuspage.Options{})
	for _, m := range []string{"POST", "PUT", "DELETE", "OPTIONS"} {
		c := coretest.Dial(t, st.addr)
		c.Send(m + " /status HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
		resp, _ := c.Response(m)
		if h := resp.Header; resp.StatusCode != 405 || h.Get("Allow") != "GET, HEAD" ||
			h.Get("Cache-Control") != "no-store" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d, %v", m, resp.StatusCode, h)
		}
	}
}
