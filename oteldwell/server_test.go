package oteldwell_test

import (
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/oteldwell"
)

// TestObserveServer: the server's statistics, as the instruments report them after a few
// requests on two connections and a malformed one: connections accepted, requests, the 400,
// the bytes, the idle connections; and nothing once unregistered.
func TestObserveServer(t *testing.T) {
	mp, reader := newMeter()
	s, addr := coretest.Serve(t, func(c *core.Ctx) { c.WriteString("hello") }, core.Options{})
	reg, err := oteldwell.ObserveServer(s, oteldwell.Options{MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}

	const req = "GET / HTTP/1.1\r\nHost: h\r\n\r\n"
	kept := coretest.Dial(t, addr) // three requests, then idle
	for range 3 {
		kept.Send(req)
		if resp, body := kept.Response("GET"); resp.StatusCode != 200 || body != "hello" {
			t.Fatalf("%d %q", resp.StatusCode, body)
		}
	}
	bad := coretest.Dial(t, addr)
	bad.Send("GET / HTTP/1.1\r\nHost: h\r\nBad Header\r\n\r\n")
	if resp, _ := bad.Response("GET"); resp.StatusCode != 400 {
		t.Fatalf("malformed request: %d", resp.StatusCode)
	}
	bad.ExpectEOF()

	port := "server.port=" + addr[strings.LastIndexByte(addr, ':')+1:]
	with := func(kv string) string {
		if kv == "" {
			return port
		}
		if kv < port {
			return kv + "," + port
		}
		return port + "," + kv
	}
	ms := collect(t, reader)
	counter := func(name, kv string) int64 {
		t.Helper()
		m, ok := ms[name]
		if !ok {
			t.Fatalf("no %s", name)
		}
		if s, ok := m.Data.(metricdata.Sum[int64]); !ok || !s.IsMonotonic {
			t.Fatalf("%s is a %T, not a counter", name, m.Data)
		}
		return sums(t, m)[with(kv)]
	}
	for _, c := range []struct {
		name, kv string
		want     int64
	}{
		{"dwell.server.connections.accepted", "", 2},
		{"dwell.server.requests", "", 3},
		{"dwell.server.refusals", "http.response.status_code=400", 1},
		{"dwell.server.refusals", "http.response.status_code=413", 0},
		{"dwell.server.refusals", "", 0},
		{"dwell.server.panics", "", 0},
		{"dwell.server.tls.handshakes", "result=completed", 0},
	} {
		if got := counter(c.name, c.kv); got != c.want {
			t.Errorf("%s{%s}: %d, want %d", c.name, c.kv, got, c.want)
		}
	}
	// All of the kept connection's; the malformed request's up to where it was refused, at
	// least.
	sent := int64(3 * len(req))
	if got := counter("dwell.server.network.io", "network.io.direction=receive"); got <= sent {
		t.Errorf("bytes received: %d, want more than %d", got, sent)
	}
	if got := counter("dwell.server.network.io", "network.io.direction=transmit"); got <= 3*int64(len("hello")) {
		t.Errorf("bytes sent: %d", got)
	}
	if got := counter("dwell.server.loop.turns", ""); got <= 0 {
		t.Errorf("turns: %d", got)
	}

	conns := ms["dwell.server.connections"]
	if s, ok := conns.Data.(metricdata.Sum[int64]); !ok || s.IsMonotonic {
		t.Fatalf("dwell.server.connections is a %T, not an UpDownCounter", conns.Data)
	}
	states := sums(t, conns)
	if len(states) != 9 {
		t.Errorf("states:\n\t%s", keys(states))
	}
	// The kept connection is idle; the malformed one's may still be closing.
	if n := states[with("state=idle")]; n != 1 {
		t.Errorf("%d idle connections, want 1 (%v)", n, states)
	}
	for _, st := range []string{"reading", "running", "parked", "working", "writing", "handed_over", "http2"} {
		if n := states[with("state="+st)]; n != 0 {
			t.Errorf("%d connections %s", n, st)
		}
	}
	if _, ok := ms["dwell.server.continuations"]; !ok {
		t.Error("no dwell.server.continuations")
	}
	if tls := sums(t, ms["dwell.server.tls.connections"]); tls[with("state=established")] != 0 || tls[with("state=handshaking")] != 0 {
		t.Errorf("TLS connections %v", tls)
	}
	if g, ok := ms["dwell.server.loop.longest_turn"].Data.(metricdata.Gauge[float64]); !ok || len(g.DataPoints) != 1 || g.DataPoints[0].Value <= 0 {
		t.Errorf("longest turn %v", fmt.Sprint(ms["dwell.server.loop.longest_turn"].Data))
	}

	if err := reg.Unregister(); err != nil {
		t.Fatal(err)
	}
	for name, m := range collect(t, reader) {
		if strings.HasPrefix(name, "dwell.server.") {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok && len(s.DataPoints) > 0 {
				t.Errorf("%s reported after Unregister", name)
			}
		}
	}
}
