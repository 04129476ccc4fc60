package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/bench/internal/proc"
)

// figureSpec says how to measure one figure on one server.
type figureSpec struct {
	id, title string
	metrics   []Metric
	// selfStart figures start the server themselves (start-up time); the others get a server
	// the driver started and stops again after the measurement, so no figure inherits another's
	// memory or warm caches.
	selfStart bool
	// ws figures are the WebSocket ones (ws.go): their servers are the WebSocket contenders.
	ws bool
	// tls is the key exchange the HTTPS figures (tls.go) start the Go servers with, x25519 or
	// default; empty for plaintext. Their servers are tlsContenders, started to serve HTTPS.
	tls string
	// rl figures are the rate-limit ones (ratelimit.go): their servers are rlContenders.
	rl bool
	// grpc figures are the gRPC ones (grpc.go): their servers are grpcContenders.
	grpc bool
	// h2 figures are the HTTP/2 ones (h2.go): their servers are h2Contenders, over TLS when tls
	// is set too.
	h2 bool
	// once figures are measured in the first round only (the HTTP/2 abuse figures, h2abuse.go:
	// ten seconds of an attack each, whose figures are against targets, not ratios).
	once bool
	// writeTimeout, when set, is the write timeout the figure's servers start with (the
	// zero-window figure's: -write-timeout for the Go servers, send_timeout for nginx).
	writeTimeout time.Duration
	measure      func(ctx context.Context, r *runner, m *measurement) (map[string]float64, error)
}

// measurement is one figure on one server in one round.
type measurement struct {
	srv *server
	rs  *running // nil for selfStart figures
	// cmds collects the commands run, for the report.
	cmds [][]string
	// note is what the report says of the server under the figure's table (the extension a
	// WebSocket server agreed to), if anything.
	note string
}

var wrkMetrics = []Metric{
	{ID: "rps", Label: "requests per second", Unit: "req/s"},
	{ID: "cpu_us", Label: "server CPU per request", Unit: "µs", Digits: 2},
	{ID: "p50_us", Label: "latency p50", Unit: "µs"},
	{ID: "p99_us", Label: "latency p99", Unit: "µs"},
	{ID: "p999_us", Label: "latency p99.9", Unit: "µs"},
	{ID: "errors", Label: "errors (wrk)", Unit: ""},
	{ID: "other_pct", Label: "CPU 0 busy outside the server (noise)", Unit: "%", Digits: 1},
}

var specs = []*figureSpec{
	{id: "hello", title: "Hello, keep-alive", metrics: wrkMetrics, measure: wrkFigure(wrkLoad{path: "/hello", conns: wrkConns})},
	{id: "c1", title: "Hello, keep-alive, one connection", metrics: wrkMetrics, measure: wrkFigure(wrkLoad{path: "/hello", conns: 1})},
	{id: "std", title: "Hello from a net/http handler, keep-alive", metrics: wrkMetrics, measure: wrkFigure(wrkLoad{path: "/std/hello", conns: wrkConns})},
	{id: "close", title: "Hello, Connection: close", metrics: wrkMetrics, measure: wrkFigure(wrkLoad{path: "/hello", header: "Connection: close", conns: wrkConns})},
	{id: "file", title: "254-byte file, keep-alive", metrics: wrkMetrics, measure: wrkFigure(wrkLoad{path: "/file", conns: wrkConns})},
	{id: "fs", title: "254-byte file of an embed.FS, keep-alive", metrics: wrkMetrics, measure: wrkFigure(wrkLoad{path: peer.AssetPath, conns: wrkConns})},
	{id: "pipeline", title: fmt.Sprintf("Hello, pipelined %d deep", pipelineDepth), metrics: wrkMetrics, measure: wrkFigure(wrkLoad{path: "/hello", conns: wrkConns, pipelined: true})},
	{id: "idle", title: "Memory per idle keep-alive connection", metrics: []Metric{
		{ID: "kib", Label: "RSS per idle connection", Unit: "KiB", Digits: 2},
		{ID: "base_mib", Label: "RSS with 1,000 idle connections", Unit: "MiB", Digits: 1},
	}, measure: holdFigure("idle", "/hello")},
	{id: "park", title: "Memory per parked long poll", metrics: []Metric{
		{ID: "kib", Label: "RSS per parked request", Unit: "KiB", Digits: 2},
		{ID: "base_mib", Label: "RSS with 1,000 parked requests", Unit: "MiB", Digits: 1},
		{ID: "release_ms", Label: "time to answer all 5,000 after one release", Unit: "ms", Digits: 1},
	}, measure: holdFigure("park", "/poll")},
	{id: "download", title: "Download over one connection", metrics: transferMetrics, measure: transferFigure("download", "/download")},
	{id: "upload", title: "Upload over one connection", metrics: transferMetrics, measure: transferFigure("upload", "/upload")},
	{id: "startup", title: "Start-up to first response", metrics: []Metric{
		{ID: "ms", Label: "exec to first 200 (median of the round's starts)", Unit: "ms", Digits: 1},
	}, selfStart: true, measure: startupFigure},
}

var transferMetrics = []Metric{
	{ID: "gbps", Label: "throughput", Unit: "GB/s", Digits: 2},
	{ID: "rss_mib", Label: "server RSS growth (peak)", Unit: "MiB", Digits: 1},
}

func figureIDs() []string {
	ids := make([]string, len(specs))
	for i, s := range specs {
		ids[i] = s.id
	}
	return ids
}

func specFor(id string) *figureSpec {
	for _, s := range specs {
		if s.id == id {
			return s
		}
	}
	return nil
}

// runFigure measures one figure on every server, round by round. Within a round the servers
// take turns, starting one later each round, so slow drift on the machine spreads over all of
// them instead of favouring whoever goes first.
func (r *runner) runFigure(ctx context.Context, spec *figureSpec, servers []*server) error {
	f := &Figure{ID: spec.id, Title: spec.title}
	for _, m := range spec.metrics {
		f.Metrics = append(f.Metrics, &Metric{ID: m.ID, Label: m.Label, Unit: m.Unit, Digits: m.Digits, Better: m.Better})
	}
	if spec.h2 {
		f.Refs = []string{h2Ref}
	}
	if spec.ws || spec.tls != "" || spec.rl || spec.h2 || spec.grpc {
		for _, s := range servers {
			f.Servers = append(f.Servers, s.name)
			if spec.ws && slices.Contains(wsPeers, s.name) || spec.rl && slices.Contains(rlPeers, s.name) ||
				spec.grpc && slices.Contains(grpcPeers, s.name) {
				f.Peers = append(f.Peers, s.name)
			}
		}
	}
	r.res.Figures = append(r.res.Figures, f)
	for round := range r.cfg.rounds {
		if spec.once && round > 0 {
			break
		}
		for i := range servers {
			s := servers[(i+round)%len(servers)]
			if why, ok := s.lacks[spec.id]; ok {
				if f.Absent == nil {
					f.Absent = map[string]string{}
				}
				f.Absent[s.name] = why
				continue
			}
			m := &measurement{srv: s}
			vals, err := r.measureOnce(ctx, spec, m)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				r.logf("%s round %d %s: FAILED: %v", spec.id, round+1, s.name, err)
				f.fail(s.name, fmt.Sprintf("round %d: %v", round+1, err))
				continue
			}
			for id, v := range vals {
				if mt := f.metric(id); mt != nil {
					mt.add(s.name, round+1, v)
				}
			}
			r.logf("%s round %d %s: %s", spec.id, round+1, s.name, brief(spec, vals))
			if m.note != "" {
				if f.Notes == nil {
					f.Notes = map[string]string{}
				}
				f.Notes[s.name] = m.note
			}
			if len(f.Commands) == 0 {
				for _, c := range m.cmds {
					f.Commands = append(f.Commands, r.display(c, m))
				}
			}
		}
	}
	return nil
}

func (r *runner) measureOnce(ctx context.Context, spec *figureSpec, m *measurement) (map[string]float64, error) {
	r.writeTimeout = spec.writeTimeout // what the servers of this figure start with
	if spec.selfStart {
		return spec.measure(ctx, r, m)
	}
	rs, err := r.startServer(ctx, m.srv, spec.tls)
	if err != nil {
		return nil, err
	}
	defer func() {
		r.stopServer(rs)
		r.noteFallback(spec.id, m.srv.name, rs.log) // did dwell-uring run on io_uring?
	}()
	m.rs = rs
	if r.serverCmds == nil {
		r.serverCmds = map[string]string{}
	}
	key := m.srv.name
	if m.srv.ws {
		key = "ws:" + key // a WebSocket contender may share an HTTP server's name
	}
	if spec.h2 {
		key = "h2:" + key // so may an HTTP/2 one, started differently
	}
	if spec.tls != "" {
		key = "tls-" + spec.tls + ":" + key
	}
	if spec.writeTimeout > 0 {
		key = "wt:" + key // started with a write timeout of the figure's
	}
	if _, ok := r.serverCmds[key]; !ok {
		r.serverCmds[key] = r.display(r.argv(m.srv, rs.port, spec.tls), m)
	}
	return spec.measure(ctx, r, m)
}

func brief(spec *figureSpec, vals map[string]float64) string {
	var parts []string
	for _, mt := range spec.metrics {
		if v, ok := vals[mt.ID]; ok && mt.ID != "errors" {
			parts = append(parts, fmt.Sprintf("%.*f %s", mt.Digits, v, mt.Unit))
		}
	}
	return strings.Join(parts, ", ")
}

// display renders a command for the report, with the run's temporary directory, port and pid
// as $WORK, $PORT and $PID, and tools by name.
func (r *runner) display(argv []string, m *measurement) string {
	s := shellJoin(argv)
	for _, t := range []string{"taskset", "wrk", "h2load", "h2o"} {
		if p := r.tools[t]; p != "" {
			s = strings.ReplaceAll(s, p+" ", t+" ")
		}
	}
	s = strings.ReplaceAll(s, r.work, "$WORK")
	if m.rs != nil {
		port := strconv.Itoa(m.rs.port)
		s = strings.ReplaceAll(s, "127.0.0.1:"+port, "127.0.0.1:$PORT")
		s = strings.ReplaceAll(s, "nginx-"+port+".conf", "nginx-$PORT.conf")
		s = strings.ReplaceAll(s, "h2o-"+port+".conf", "h2o-$PORT.conf")
		s = strings.ReplaceAll(s, "-pid "+strconv.Itoa(m.rs.pid), "-pid $PID")
	}
	return s
}

// cpuFigures are the figures whose server CPU per request the report also compares with nginx's
// and fasthttp's, the cheapest general-purpose servers among the peers.
var cpuFigures = []string{"hello", "c1", "close", "file", "fs", "pipeline"}

// wrkLoad is what one wrk figure sends.
type wrkLoad struct {
	path string
	// header is an extra request header field, if any.
	header string
	conns  int
	// pipelined sends pipelineDepth requests per write (the pipeline script) instead of one.
	pipelined bool
}

// wrkFigure warms the server up for a second, then runs wrk and reads the server's CPU time
// before and after: CPU per request is that difference over the requests wrk completed. A run
// during which something else took much of the server's core is run again once, while the
// run's retry budget lasts, and the quieter of the two is kept.
func wrkFigure(load wrkLoad) func(context.Context, *runner, *measurement) (map[string]float64, error) {
	return func(ctx context.Context, r *runner, m *measurement) (map[string]float64, error) {
		url := m.rs.scheme() + "://" + m.rs.addr + load.path
		warm := r.wrkArgv(url, 1, load, false)
		if _, err := r.runWrk(ctx, warm); err != nil {
			return nil, err
		}
		argv := r.wrkArgv(url, r.cfg.wrkSecs, load, true)
		m.cmds = append(m.cmds, warm, argv)
		vals, err := r.wrkOnce(ctx, m, argv)
		if err != nil || vals["other_pct"] <= noisyPct || r.retries <= 0 {
			return vals, err
		}
		r.retries--
		r.logf("%s: CPU %s was %.0f%% busy outside the server; measuring again", m.srv.name, serverCPU, vals["other_pct"])
		again, err := r.wrkOnce(ctx, m, argv)
		if err != nil || again["other_pct"] >= vals["other_pct"] {
			return vals, nil
		}
		return again, nil
	}
}

// noisyPct is how busy, in percent, the server's core may be outside the server before a wrk
// run is repeated.
const noisyPct = 20

func (r *runner) wrkOnce(ctx context.Context, m *measurement, argv []string) (map[string]float64, error) {
	before, err := proc.CPU(m.rs.pid)
	if err != nil {
		return nil, err
	}
	busyBefore, _ := proc.CPUBusy(serverCPUIndex)
	t0 := time.Now()
	w, err := r.runWrk(ctx, argv)
	if err != nil {
		return nil, err
	}
	after, err := proc.CPU(m.rs.pid)
	if err != nil {
		return nil, err
	}
	busyAfter, _ := proc.CPUBusy(serverCPUIndex)
	// Whatever else ran on the server's core during the run, in percent of the run: the
	// figure to look at when a result is off.
	other := float64(busyAfter-busyBefore-(after-before)) / float64(time.Since(t0)) * 100
	if w.Requests == 0 {
		return nil, fmt.Errorf("wrk completed no request")
	}
	return map[string]float64{
		"rps":       float64(w.Requests) / (float64(w.DurationUs) / 1e6),
		"cpu_us":    float64(after-before) / 1e3 / float64(w.Requests),
		"p50_us":    w.P50,
		"p99_us":    w.P99,
		"p999_us":   w.P999,
		"errors":    float64(w.errors()),
		"other_pct": max(other, 0),
		// Not metrics of any figure, for a figure's own arithmetic (the share of 429s).
		"requests":      float64(w.Requests),
		"status_errors": float64(w.Status),
	}, nil
}

// runLoad runs the load tool pinned to the load CPU and decodes its JSON result into v.
func (r *runner) runLoad(ctx context.Context, m *measurement, v any, args ...string) error {
	argv := append([]string{r.tools["taskset"], "-c", loadCPU, r.load}, args...)
	m.cmds = append(m.cmds, argv)
	var out, errb bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := r.procs.run(ctx, cmd); err != nil {
		return fmt.Errorf("load %s: %w\n%s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return json.Unmarshal(out.Bytes(), v)
}

// holdFigure holds 1,000 then 5,000 connections (idle after one request, or parked) and
// divides the server's RSS growth between the two by the 4,000 connections added. Against a
// server started for HTTPS each connection completes a full TLS handshake first.
func holdFigure(mode, path string) func(context.Context, *runner, *measurement) (map[string]float64, error) {
	return func(ctx context.Context, r *runner, m *measurement) (map[string]float64, error) {
		var res struct {
			BytesPerConn float64 `json:"bytes_per_conn"`
			Checkpoints  []struct {
				RSS int64 `json:"rss_bytes"`
			} `json:"checkpoints"`
			Released   int     `json:"released"`
			ReleaseMS  float64 `json:"release_ms"`
			Negotiated string  `json:"negotiated"`
		}
		first := 1000
		args := []string{mode, "-addr", m.rs.addr, "-pid", strconv.Itoa(m.rs.pid), "-path", path,
			"-n", strconv.Itoa(r.cfg.conns), "-at", fmt.Sprintf("%d,%d", first, r.cfg.conns)}
		if mode == "park" {
			args = append(args, "-release")
		}
		if m.rs.tls {
			args = append(args, "-tls", "-cert", r.cert, "-curves", tlsX25519)
		}
		if err := r.runLoad(ctx, m, &res, args...); err != nil {
			return nil, err
		}
		m.note = res.Negotiated
		if len(res.Checkpoints) == 0 {
			return nil, fmt.Errorf("no checkpoint")
		}
		vals := map[string]float64{
			"kib":      res.BytesPerConn / 1024,
			"base_mib": float64(res.Checkpoints[0].RSS) / (1 << 20),
		}
		if mode == "park" {
			vals["release_ms"] = res.ReleaseMS
		}
		return vals, nil
	}
}

// transferFigure moves the run's transfer size over one connection while the load tool samples
// the server's RSS.
func transferFigure(mode, path string) func(context.Context, *runner, *measurement) (map[string]float64, error) {
	return func(ctx context.Context, r *runner, m *measurement) (map[string]float64, error) {
		var res struct {
			GBPerSec  float64 `json:"gb_per_sec"`
			RSSGrowth int64   `json:"rss_growth_bytes"`
		}
		err := r.runLoad(ctx, m, &res, mode, "-addr", m.rs.addr, "-pid", strconv.Itoa(m.rs.pid),
			"-path", path, "-size", strconv.FormatInt(r.cfg.xferSize, 10))
		if err != nil {
			return nil, err
		}
		return map[string]float64{"gbps": res.GBPerSec, "rss_mib": float64(res.RSSGrowth) / (1 << 20)}, nil
	}
}

// startupFigure has the load tool start the server several times and time exec to the first
// 200; the round's figure is the median of those starts.
func startupFigure(ctx context.Context, r *runner, m *measurement) (map[string]float64, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	if m.srv.isNginx() {
		if err := r.nginxConf(port, false, false); err != nil {
			return nil, err
		}
	}
	var res struct {
		MedianMs float64 `json:"median_ms"`
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := append([]string{"startup", "-addr", addr, "-n", strconv.Itoa(r.cfg.starts), "--"}, r.argv(m.srv, port, "")...)
	m.rs = &running{port: port, addr: addr}
	if err := r.runLoad(ctx, m, &res, args...); err != nil {
		return nil, err
	}
	return map[string]float64{"ms": res.MedianMs}, nil
}
