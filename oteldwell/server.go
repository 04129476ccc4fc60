package oteldwell

import (
	"context"
	"errors"
	"net"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/dwellhttp/dwell/core"
)

// The attributes of ObserveServer's instruments that the semantic conventions do not name.
const (
	// stateKey is a connection's state, in dwell.server.connections and
	// dwell.server.tls.connections.
	stateKey = attribute.Key("state")
	// resultKey is how a TLS handshake ended, in dwell.server.tls.handshakes.
	resultKey = attribute.Key("result")
)

// ObserveServer registers asynchronous instruments, with o's meter provider, that report
// s.Stats() at each collection — one call for them all, summed over the server's loops:
//
//   - dwell.server.connections ({connection}, an UpDownCounter): the open connections by
//     state, attribute state: "idle" (waiting for a request), "reading" (a request head or a
//     discarded body arriving), "running" (a handler running: 0 for a collection off the
//     loops, which copy their statistics between handlers), "parked" (a request waiting,
//     whichever the style: a handler parked in its coroutine or a continuation pending),
//     "working" (a handler waiting for blocking work it handed off, wait.Do or wait.Call),
//     "writing" (a response waiting for the client to take it), "closing", and "handed_over"
//     (a WebSocket or another Protocol). The states are exclusive: their sum is the open
//     connections;
//   - dwell.server.continuations ({request}, an UpDownCounter): of the parked, the requests
//     waiting as a continuation (core.Ctx.Detach, Topic.OnNext), which hold no coroutine;
//   - dwell.server.tls.connections ({connection}, an UpDownCounter): the open connections over
//     TLS, attribute state "handshaking" or "established" — an instrument of its own, since
//     they are also counted in dwell.server.connections;
//   - dwell.server.connections.accepted ({connection}, a counter): the connections accepted;
//   - dwell.server.requests ({request}, a counter): the requests handed to a handler;
//   - dwell.server.refusals ({response}, a counter): the server's own answers, the requests
//     refused before a handler ran and the answers it gave for one (a body that failed, a
//     deadline, a shutdown), by http.response.status_code (400, 408, 413, 414, 417, 431, 501,
//     503, 505; the attribute is absent for any other status);
//   - dwell.server.panics ({panic}, a counter): the handlers and continuations that panicked;
//   - dwell.server.network.io (By, a counter): the bytes read from and written to the
//     sockets (TLS records for a TLS server), by network.io.direction "receive" or "transmit";
//   - dwell.server.stalls ({stall}, a counter): the stalls of application code, a handler or
//     callback that blocked its loop (or ran on it) for core.Options.StallThreshold;
//   - dwell.server.loop.turns ({turn}, a counter): the loops' iterations;
//   - dwell.server.loop.longest_turn (s, a gauge): the longest turn any loop has taken;
//   - dwell.server.tls.handshakes ({handshake}, a counter): the TLS handshakes by result:
//     "completed", "failed" (also counted as a refused 400 when plaintext came) or "abandoned".
//
// Every observation also has server.port, the port s listens on, once it listens, so that two
// servers of a program (HTTP and HTTPS) report apart.
//
// Collect off the loops: core.Server.Stats waits for each loop's copy, which a collection from
// a handler would make it wait for with the meter's locks held (see the package doc). The
// returned registration's Unregister stops the reports; the instruments stay.
func ObserveServer(s *core.Server, o Options) (metric.Registration, error) {
	meter := o.meter()
	var ins serverInstruments
	var err, e error
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		var c metric.Int64ObservableCounter
		c, e = meter.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		err = errors.Join(err, e)
		return c
	}
	ins.conns, e = meter.Int64ObservableUpDownCounter("dwell.server.connections",
		metric.WithUnit("{connection}"), metric.WithDescription("Open connections, by state."))
	err = errors.Join(err, e)
	ins.continuations, e = meter.Int64ObservableUpDownCounter("dwell.server.continuations",
		metric.WithUnit("{request}"), metric.WithDescription("Parked requests waiting as a continuation, without a coroutine."))
	err = errors.Join(err, e)
	ins.tlsConns, e = meter.Int64ObservableUpDownCounter("dwell.server.tls.connections",
		metric.WithUnit("{connection}"), metric.WithDescription("Open connections over TLS, by the state of their handshake."))
	err = errors.Join(err, e)
	ins.accepted = counter("dwell.server.connections.accepted", "{connection}", "Connections accepted.")
	ins.requests = counter("dwell.server.requests", "{request}", "Requests handed to a handler.")
	ins.refusals = counter("dwell.server.refusals", "{response}", "The server's own answers: requests refused before a handler ran, and answers given for a handler.")
	ins.panics = counter("dwell.server.panics", "{panic}", "Handlers and continuations that panicked.")
	ins.io = counter("dwell.server.network.io", "By", "Bytes read from and written to the connections.")
	ins.stalls = counter("dwell.server.stalls", "{stall}", "Stalls: application code that blocked a loop for the stall threshold.")
	ins.turns = counter("dwell.server.loop.turns", "{turn}", "Loop iterations.")
	ins.handshakes = counter("dwell.server.tls.handshakes", "{handshake}", "TLS handshakes, by result.")
	ins.longest, e = meter.Float64ObservableGauge("dwell.server.loop.longest_turn",
		metric.WithUnit("s"), metric.WithDescription("The longest turn any loop has taken."))
	err = errors.Join(err, e)
	if err != nil {
		return nil, err
	}
	return meter.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		ins.observe(obs, s.Stats().Total, serverPort(s))
		return nil
	}, ins.conns, ins.continuations, ins.tlsConns, ins.accepted, ins.requests, ins.refusals, ins.panics, ins.io,
		ins.stalls, ins.turns, ins.handshakes, ins.longest)
}

// serverInstruments are ObserveServer's instruments.
type serverInstruments struct {
	conns, continuations, tlsConns                                      metric.Int64ObservableUpDownCounter
	accepted, requests, refusals, panics, io, stalls, turns, handshakes metric.Int64ObservableCounter
	longest                                                             metric.Float64ObservableGauge
}

// serverPort returns the port s listens on, or 0 before it listens.
func serverPort(s *core.Server) int {
	if a, ok := s.Addr().(*net.TCPAddr); ok {
		return a.Port
	}
	return 0
}

// observe reports st. It runs once a collection, so its attribute sets are made each time.
func (ins *serverInstruments) observe(obs metric.Observer, st core.LoopStats, port int) {
	var base []attribute.KeyValue
	if port != 0 {
		base = []attribute.KeyValue{semconv.ServerPortKey.Int(port)}
	}
	with := func(kv ...attribute.KeyValue) metric.ObserveOption {
		return metric.WithAttributes(append(kv, base...)...)
	}
	all := with()

	n := st.Conns
	for _, c := range [...]struct {
		state string
		n     int
	}{
		{"idle", n.Idle}, {"reading", n.Reading}, {"running", n.Running}, {"parked", n.Parked + n.Detached},
		{"working", n.Working}, {"writing", n.Writing}, {"closing", n.Closing},
		{"handed_over", n.HandedOver}, {"http2", n.HTTP2},
	} {
		obs.ObserveInt64(ins.conns, int64(c.n), with(stateKey.String(c.state)))
	}
	obs.ObserveInt64(ins.continuations, int64(n.Detached), all)
	obs.ObserveInt64(ins.tlsConns, int64(n.TLSHandshaking), with(stateKey.String("handshaking")))
	obs.ObserveInt64(ins.tlsConns, int64(n.TLS-n.TLSHandshaking), with(stateKey.String("established")))

	obs.ObserveInt64(ins.accepted, st.Accepted, all)
	obs.ObserveInt64(ins.requests, st.Requests, all)
	r := st.Refused
	for _, c := range [...]struct {
		status int
		n      int64
	}{
		{400, r.BadRequest}, {408, r.RequestTimeout}, {413, r.ContentTooLarge}, {414, r.URITooLong},
		{417, r.ExpectationFailed}, {431, r.HeaderFieldsTooLarge}, {501, r.NotImplemented},
		{503, r.Unavailable}, {505, r.VersionNotSupported},
	} {
		obs.ObserveInt64(ins.refusals, c.n, with(semconv.HTTPResponseStatusCodeKey.Int(c.status)))
	}
	obs.ObserveInt64(ins.refusals, r.Other, all)
	obs.ObserveInt64(ins.panics, st.Panics, all)
	obs.ObserveInt64(ins.io, st.BytesIn, with(semconv.NetworkIODirectionReceive))
	obs.ObserveInt64(ins.io, st.BytesOut, with(semconv.NetworkIODirectionTransmit))
	obs.ObserveInt64(ins.stalls, st.Stalls, all)
	obs.ObserveInt64(ins.turns, st.Turns, all)
	obs.ObserveFloat64(ins.longest, st.LongestTurn.Seconds(), all)
	obs.ObserveInt64(ins.handshakes, st.TLSHandshakes, with(resultKey.String("completed")))
	obs.ObserveInt64(ins.handshakes, st.TLSHandshakeFailures, with(resultKey.String("failed")))
	obs.ObserveInt64(ins.handshakes, st.TLSHandshakesAbandoned, with(resultKey.String("abandoned")))
}
