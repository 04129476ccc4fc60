package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/dwellhttp/dwell/bench/internal/peer"
)

// The HTTPS figures: dwell serving TLS on its loops beside nginx and net/http's ServeTLS, each
// alone on CPU 0 with the same certificate (ECDSA P-256, generated for the run), TLS 1.3 with
// TLS_AES_128_GCM_SHA256 and X25519 for all: the Go servers with CurvePreferences X25519 (Go's
// default would be X25519MLKEM768) and crypto/tls's own choice of suite (AES-128-GCM first on a
// CPU with AES instructions), nginx with `ssl_ecdh_curve X25519` and `ssl_conf_command
// Ciphersuites TLS_AES_128_GCM_SHA256` (nginx/nginx.conf.tmpl). Session tickets are on
// everywhere, each server's default. Two figures give the Go servers their default key
// exchange, X25519MLKEM768, which nginx's OpenSSL 3.0 lacks. The keep-alive figure is wrk over
// https; the handshake figures the load tool's tls-handshake mode; the memory figures its idle
// and park modes with -tls.

// tlsContenders are the servers of the HTTPS figures, in report order.
var tlsContenders = []string{"nethttp", "nginx", "dwell"}

// isTLSContender reports whether the server takes part in the HTTPS figures: one of
// tlsContenders, or dwell-base beside dwell.
func isTLSContender(name string) bool {
	return slices.Contains(tlsContenders, measuredAs(name))
}

// Key exchanges a figure's Go servers are started with (their -curves).
const (
	tlsX25519  = "x25519"
	tlsDefault = "default"
)

// tlsWorkers is how many connections the handshake figures keep in flight.
const tlsWorkers = 8

// tlsBurstClients connect at once in the burst figure, beside tlsBurstProbes keep-alive
// connections opened before them.
const (
	tlsBurstClients = 1000
	tlsBurstProbes  = 4
)

var tlsHandshakeMetrics = []Metric{
	{ID: "cpu_us", Label: "server CPU per connection (handshake, one request, close)", Unit: "µs", Digits: 1},
	{ID: "hps", Label: "connections per second", Unit: "conn/s"},
	{ID: "resumed_pct", Label: "handshakes that resumed a session", Unit: "%", Digits: 1},
	{ID: "other_pct", Label: "CPU 0 busy with other tasks (noise; interrupts left out)", Unit: "%", Digits: 1},
	{ID: "client_pct", Label: "load tool's CPU, of its core", Unit: "%", Digits: 0},
}

var tlsSpecs = []*figureSpec{
	{id: "tls-hello", title: "HTTPS: hello, keep-alive", tls: tlsX25519, metrics: wrkMetrics,
		measure: wrkFigure(wrkLoad{path: "/hello", conns: wrkConns})},
	{id: "tls-full", title: "HTTPS: full handshake per connection", tls: tlsX25519, metrics: tlsHandshakeMetrics,
		measure: tlsHandshakeFigure(false, tlsX25519)},
	{id: "tls-resume", title: "HTTPS: resumed handshake per connection", tls: tlsX25519, metrics: tlsHandshakeMetrics,
		measure: tlsHandshakeFigure(true, tlsX25519)},
	{id: "tls-idle", title: "HTTPS: memory per idle keep-alive connection", tls: tlsX25519, metrics: []Metric{
		{ID: "kib", Label: "RSS per idle connection", Unit: "KiB", Digits: 2},
		{ID: "base_mib", Label: "RSS with 1,000 idle connections", Unit: "MiB", Digits: 1},
	}, measure: holdFigure("idle", "/hello")},
	{id: "tls-park", title: "HTTPS: memory per parked long poll", tls: tlsX25519, metrics: []Metric{
		{ID: "kib", Label: "RSS per parked request", Unit: "KiB", Digits: 2},
		{ID: "base_mib", Label: "RSS with 1,000 parked requests", Unit: "MiB", Digits: 1},
		{ID: "release_ms", Label: "time to answer all 5,000 after one release", Unit: "ms", Digits: 1},
	}, measure: holdFigure("park", "/poll")},
	{id: "tls-burst", title: fmt.Sprintf("HTTPS: %s clients connecting at once", fmtNum(tlsBurstClients, 0)), tls: tlsX25519,
		metrics: []Metric{
			{ID: "all_ms", Label: "until the last client has its answer (handshake and one GET)", Unit: "ms", Digits: 0},
			{ID: "p50_ms", Label: "until the median client has it", Unit: "ms", Digits: 0},
			{ID: "probe_p99_us", Label: "latency p99 of keep-alive connections already open, meanwhile", Unit: "µs"},
			{ID: "cpu_ms", Label: "server CPU for the burst", Unit: "ms", Digits: 0},
		}, measure: tlsBurstFigure},
	{id: "tls-full-mlkem", title: "HTTPS: full handshake per connection, X25519MLKEM768", tls: tlsDefault,
		metrics: tlsHandshakeMetrics, measure: tlsHandshakeFigure(false, tlsDefault)},
	{id: "tls-resume-mlkem", title: "HTTPS: resumed handshake per connection, X25519MLKEM768", tls: tlsDefault,
		metrics: tlsHandshakeMetrics, measure: tlsHandshakeFigure(true, tlsDefault)},
}

func init() { specs = append(specs, tlsSpecs...) }

// tlsFigureIDs are the HTTPS figures' ids, in order.
func tlsFigureIDs() []string {
	ids := make([]string, len(tlsSpecs))
	for i, s := range tlsSpecs {
		ids[i] = s.id
	}
	return ids
}

// hasTLS reports whether any figure asked for is an HTTPS one.
func hasTLS(figs []string) bool {
	return slices.ContainsFunc(figs, func(f string) bool { return slices.Contains(tlsFigureIDs(), f) })
}

// tlsLacks marks the HTTPS figures s sits out, with the reason.
func tlsLacks(s *server) {
	for _, id := range tlsFigureIDs() {
		if !isTLSContender(s.name) {
			s.lacks[id] = "the HTTPS figures measure dwell, nginx and net/http"
		}
	}
	if s.isNginx() {
		s.lacks["tls-park"] = "nginx has no long poll of its own"
		s.lacks["tls-full-mlkem"] = "nginx's OpenSSL (3.0) has no ML-KEM; its handshakes are in the X25519 figures"
		s.lacks["tls-resume-mlkem"] = s.lacks["tls-full-mlkem"]
	}
}

// tlsArgs are the flags that make a Go server serve HTTPS with the run's certificate.
func (r *runner) tlsArgs(curves string) []string {
	return []string{"-cert", r.cert, "-key", r.key, "-curves", curves}
}

// tlsHandshakeFigure runs the load tool's tls-handshake mode: tlsWorkers connections in
// flight, each a handshake (a resumed one with resume, once the shared session cache holds a
// ticket), one GET /hello and a close, for wrk's duration after a warm-up. A noisy run is
// measured again as the others are.
func tlsHandshakeFigure(resume bool, curves string) func(context.Context, *runner, *measurement) (map[string]float64, error) {
	return func(ctx context.Context, r *runner, m *measurement) (map[string]float64, error) {
		args := []string{"tls-handshake", "-addr", m.rs.addr, "-pid", strconv.Itoa(m.rs.pid), "-path", "/hello",
			"-c", strconv.Itoa(tlsWorkers), "-warm", r.wsWarm(), "-d", fmt.Sprintf("%ds", r.cfg.wrkSecs),
			"-curves", curves, "-cert", r.cert, "-server-cpu", serverCPU}
		if resume {
			args = append(args, "-resume")
		}
		once := func() (map[string]float64, error) {
			var res struct {
				CPUus       float64          `json:"cpu_us_per_handshake"`
				PerSec      float64          `json:"handshakes_per_sec"`
				ResumedFrac float64          `json:"resumed_frac"`
				Other       float64          `json:"other_pct"`
				Client      float64          `json:"client_pct"`
				Negotiated  map[string]int64 `json:"negotiated"`
			}
			if err := r.runLoad(ctx, m, &res, args...); err != nil {
				return nil, err
			}
			m.note = ""
			for _, k := range sortedKeys(res.Negotiated) {
				if m.note != "" {
					m.note += "; "
				}
				m.note += k
			}
			return map[string]float64{"cpu_us": res.CPUus, "hps": res.PerSec, "resumed_pct": res.ResumedFrac * 100,
				"other_pct": res.Other, "client_pct": res.Client}, nil
		}
		return r.quieter(m, once)
	}
}

// tlsBurstFigure runs the load tool's tls-burst mode: tlsBurstClients goroutines released
// together, each a full handshake and one GET /hello, its connection kept open until all are
// done, while tlsBurstProbes keep-alive connections opened first keep asking.
func tlsBurstFigure(ctx context.Context, r *runner, m *measurement) (map[string]float64, error) {
	var res struct {
		AllMs      float64 `json:"all_ms"`
		P50Ms      float64 `json:"p50_ms"`
		ProbeP99us float64 `json:"probe_p99_us"`
		CPUms      float64 `json:"cpu_ms"`
		Negotiated string  `json:"negotiated"`
	}
	if err := r.runLoad(ctx, m, &res, "tls-burst", "-addr", m.rs.addr, "-pid", strconv.Itoa(m.rs.pid), "-path", "/hello",
		"-n", strconv.Itoa(tlsBurstClients), "-probes", strconv.Itoa(tlsBurstProbes), "-curves", tlsX25519, "-cert", r.cert); err != nil {
		return nil, err
	}
	m.note = res.Negotiated
	return map[string]float64{"all_ms": res.AllMs, "p50_ms": res.P50Ms, "probe_p99_us": res.ProbeP99us, "cpu_ms": res.CPUms}, nil
}

// prepareCert writes the run's certificate and key, $WORK/tls/cert.pem and key.pem
// (peer.WriteCertificate).
func (r *runner) prepareCert() error {
	var err error
	r.cert, r.key, err = peer.WriteCertificate(filepath.Join(r.work, "tls"))
	return err
}
