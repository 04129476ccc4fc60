package promdwell

import (
	"github.com/dwellhttp/dwell/core"
	"github.com/prometheus/client_golang/prometheus"
)

// A Collector reports a server's statistics (core.Server.Stats), summed over its loops, at each
// scrape. Gather it off the loops — Handler does — since Stats waits for each loop's copy.
//
// Gauges:
//
//   - dwell_server_connections{state}: the open connections by state — idle, reading,
//     running, parked, working, writing, closing, handed_over (see core.ConnStates); they add
//     up to the open connections (a scrape through Handler is among them, working). parked
//     counts the requests waiting, whichever the style: a handler parked in its coroutine
//     (core.ConnStates.Parked) or a continuation pending (core.ConnStates.Detached);
//   - dwell_server_open_connections: the open connections, all states together (the sum of
//     dwell_server_connections, as a series of its own for a dashboard and an alert on
//     Options.MaxConns);
//   - dwell_server_continuations: of the parked, those waiting as a continuation
//     (core.Ctx.Detach), holding no coroutine;
//   - dwell_server_tls_connections: the open connections over TLS, and
//     dwell_server_tls_handshakes_in_progress those of them still in their handshake;
//   - dwell_server_loop_longest_turn_seconds: the longest turn any loop has taken;
//   - dwell_server_loops_stale: the loops that did not answer the scrape in time (stalled);
//     their values are those of their last answer.
//
// Counters:
//
//   - dwell_server_connections_accepted_total;
//   - dwell_server_requests_total: the requests handed to a handler;
//   - dwell_server_refusals_total{http_response_status_code}: the server's own answers (400,
//     408, 413, 414, 417, 431, 501, 503, 505, and "other");
//   - dwell_server_panics_total: the handlers that panicked;
//   - dwell_server_received_bytes_total and dwell_server_sent_bytes_total: the bytes read from
//     and written to the sockets (TLS records over TLS);
//   - dwell_server_loop_turns_total and dwell_server_loop_stalls_total (application code that
//     blocked a loop for core.Options.StallThreshold);
//   - dwell_server_tls_handshakes_total{result}: done, failed and abandoned.
type Collector struct {
	s     *core.Server
	descs collectorDescs
}

type collectorDescs struct {
	conns, open, continuations, tlsConns, tlsHandshaking, longest, stale   *prometheus.Desc
	accepted, requests, refusals, panics, bytesIn, bytesOut, turns, stalls *prometheus.Desc
	handshakes                                                             *prometheus.Desc
}

// NewCollector returns a Collector of s's statistics.
func NewCollector(s *core.Server) *Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("dwell_server_"+name, help, labels, nil)
	}
	return &Collector{s: s, descs: collectorDescs{
		conns:          d("connections", "Open connections by state.", "state"),
		open:           d("open_connections", "Open connections, all states together."),
		continuations:  d("continuations", "Parked requests waiting as a continuation, without a coroutine."),
		tlsConns:       d("tls_connections", "Open connections over TLS."),
		tlsHandshaking: d("tls_handshakes_in_progress", "Open TLS connections whose handshake has not ended."),
		longest:        d("loop_longest_turn_seconds", "The longest turn any loop has taken."),
		stale:          d("loops_stale", "Loops that did not answer the scrape in time, reported as they were last."),
		accepted:       d("connections_accepted_total", "Connections accepted."),
		requests:       d("requests_total", "Requests handed to a handler."),
		refusals:       d("refusals_total", "The server's own answers, by status.", "http_response_status_code"),
		panics:         d("panics_total", "Handlers that panicked."),
		bytesIn:        d("received_bytes_total", "Bytes read from the connections."),
		bytesOut:       d("sent_bytes_total", "Bytes written to the connections."),
		turns:          d("loop_turns_total", "Turns of the loops."),
		stalls:         d("loop_stalls_total", "Stalls: application code that blocked a loop for the stall threshold."),
		handshakes:     d("tls_handshakes_total", "TLS handshakes, by result.", "result"),
	}}
}

// Describe sends the descriptions of the Collector's metrics.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	d := &c.descs
	for _, x := range []*prometheus.Desc{d.conns, d.open, d.continuations, d.tlsConns, d.tlsHandshaking, d.longest, d.stale,
		d.accepted, d.requests, d.refusals, d.panics, d.bytesIn, d.bytesOut, d.turns, d.stalls, d.handshakes} {
		ch <- x
	}
}

// Collect reads the server's statistics and sends them.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.Stats()
	t, d := &st.Total, &c.descs
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	}
	counter := func(desc *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v), labels...)
	}
	n := t.Conns
	for _, s := range []struct {
		state string
		n     int
	}{
		{"idle", n.Idle}, {"reading", n.Reading}, {"running", n.Running}, {"parked", n.Parked + n.Detached},
		{"working", n.Working}, {"writing", n.Writing}, {"closing", n.Closing}, {"handed_over", n.HandedOver}, {"http2", n.HTTP2},
	} {
		gauge(d.conns, float64(s.n), s.state)
	}
	gauge(d.open, float64(n.Open))
	gauge(d.continuations, float64(n.Detached))
	gauge(d.tlsConns, float64(n.TLS))
	gauge(d.tlsHandshaking, float64(n.TLSHandshaking))
	gauge(d.longest, t.LongestTurn.Seconds())
	stale := 0
	for _, l := range st.Loops {
		if l.Stale {
			stale++
		}
	}
	gauge(d.stale, float64(stale))
	counter(d.accepted, t.Accepted)
	counter(d.requests, t.Requests)
	r := t.Refused
	for _, x := range []struct {
		status string
		n      int64
	}{
		{"400", r.BadRequest}, {"408", r.RequestTimeout}, {"413", r.ContentTooLarge}, {"414", r.URITooLong},
		{"417", r.ExpectationFailed}, {"431", r.HeaderFieldsTooLarge}, {"501", r.NotImplemented},
		{"503", r.Unavailable}, {"505", r.VersionNotSupported}, {"other", r.Other},
	} {
		counter(d.refusals, x.n, x.status)
	}
	counter(d.panics, t.Panics)
	counter(d.bytesIn, t.BytesIn)
	counter(d.bytesOut, t.BytesOut)
	counter(d.turns, t.Turns)
	counter(d.stalls, t.Stalls)
	counter(d.handshakes, t.TLSHandshakes, "done")
	counter(d.handshakes, t.TLSHandshakeFailures, "failed")
	counter(d.handshakes, t.TLSHandshakesAbandoned, "abandoned")
}
