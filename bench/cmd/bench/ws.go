package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The WebSocket figures: dwell's package websocket beside gorilla/websocket, coder/websocket,
// gws and nbio, and the floor of their CPU figures (bench/servers/ws-floor), each server a main
// of bench/servers answering the routes of package internal/wspeer, driven by the load tool's
// ws-* modes. They have their own contenders, so their tables have their own columns, and
// their ratios are to the best peer of each row.

// A wsContender is one column of the WebSocket tables: a server binary and its arguments.
type wsContender struct {
	name, dir string
	args      []string
	// figures the contender takes part in; nil for all.
	figures []string
	why     string
}

// wsContenders are the WebSocket columns, in report order: dwell's, the peers, the floor. A
// contender's environment, if it has one of its own, is startedWith's.
var wsContenders = []wsContender{
	{name: "dwell", dir: "dwell-ws"},
	// dwell's binary started with DWELL_POLLER=io_uring (startedWith), measured right after it.
	{name: "dwell-uring", dir: "dwell-ws"},
	{name: "dwell-seq", dir: "dwell-ws", args: []string{"-style", "seq"}, figures: wsOneConnFigures,
		why: "dwell's sequential style, measured where it differs from the event style: it shares the event style's Group for broadcasts"},
	{name: "dwell-gorilla", dir: "dwell-ws", args: []string{"-style", "bridge"}, figures: wsOneConnFigures,
		why: "gorilla/websocket through dwell's net/http bridge, measured on the memory and echo figures to keep the run bounded"},
	{name: "gorilla", dir: "gorilla-ws"},
	{name: "coder", dir: "coder-ws"},
	{name: "gws", dir: "gws-ws"},
	{name: "nbio", dir: "nbio-ws"},
	{name: "floor", dir: "ws-floor", figures: wsPlainFigures,
		why: "a raw epoll loop that reads and writes the frames, the floor of the CPU figures, not a WebSocket library (no permessage-deflate)"},
}

// wsOneConnFigures are the figures without a broadcast.
var wsOneConnFigures = []string{"ws-idle", "ws-idle-deflate", "ws-echo", "ws-c1", "ws-deflate"}

// wsPlainFigures are the figures without permessage-deflate.
var wsPlainFigures = []string{"ws-idle", "ws-echo", "ws-c1", "ws-bcast", "ws-stall"}

// wsPeers are the contenders the best peer of a row is chosen among: the libraries dwell is
// compared with. The floor is none of them, as gnet is no reference of the HTTP figures.
var wsPeers = []string{"gorilla", "coder", "gws", "nbio"}

// wsModules maps a contender to the module whose version the report shows.
var wsModules = map[string]string{
	"gorilla":       "github.com/gorilla/websocket",
	"dwell-gorilla": "github.com/gorilla/websocket",
	"coder":         "github.com/coder/websocket",
	"gws":           "github.com/lxzan/gws",
	"nbio":          "github.com/lesismal/nbio",
	"floor":         "golang.org/x/sys",
}

func wsContenderNames() []string {
	names := make([]string, len(wsContenders))
	for i, c := range wsContenders {
		names[i] = c.name
	}
	return names
}

// The broadcast's plan: 128-byte messages every 100 ms to every connection, 1,000 of them
// stalled in the variant; the echo's 1 KiB messages over 50 connections.
const (
	wsEchoConns   = 50
	wsMessageSize = 1024
	wsBcastSize   = 128
	wsBcastEvery  = "100ms"
	wsStalled     = 1000
)

// wsTicks is how many messages a broadcast sends: 50 (5 s), 20 in a quick run.
func (r *runner) wsTicks() int {
	if r.cfg.quick {
		return 20
	}
	return 50
}

// wsWarm is the echo figures' warm-up, the same load before the measurement.
func (r *runner) wsWarm() string {
	if r.cfg.quick {
		return "500ms"
	}
	return "1s"
}

var wsEchoMetrics = []Metric{
	{ID: "cpu_us", Label: "server CPU per message", Unit: "µs", Digits: 2, Better: "lower"},
	{ID: "mps", Label: "messages per second", Unit: "msg/s", Better: "higher"},
	{ID: "p50_us", Label: "round trip p50", Unit: "µs", Better: "lower"},
	{ID: "p99_us", Label: "round trip p99", Unit: "µs", Better: "lower"},
	{ID: "other_pct", Label: "CPU 0 busy with other tasks (noise; interrupts left out)", Unit: "%", Digits: 1},
	{ID: "client_pct", Label: "load tool's CPU, of its core", Unit: "%", Digits: 0},
}

var wsIdleMetrics = []Metric{
	{ID: "kib", Label: "RSS per connection, 1,000 → 5,000", Unit: "KiB", Digits: 2, Better: "lower"},
	{ID: "kib_first", Label: "RSS per connection, start → 1,000", Unit: "KiB", Digits: 2, Better: "lower"},
	{ID: "kib_all", Label: "RSS per connection, start → 5,000", Unit: "KiB", Digits: 2, Better: "lower"},
	{ID: "base_mib", Label: "RSS with 1,000 connections", Unit: "MiB", Digits: 1, Better: "lower"},
}

var wsBcastMetrics = []Metric{
	{ID: "cpu_us", Label: "server CPU per frame delivered", Unit: "µs", Digits: 2, Better: "lower"},
	{ID: "p50_ms", Label: "delivery delay p50", Unit: "ms", Digits: 1, Better: "lower"},
	{ID: "p99_ms", Label: "delivery delay p99", Unit: "ms", Digits: 1, Better: "lower"},
	{ID: "delivered_pct", Label: "frames delivered to the readers, of those broadcast", Unit: "%", Digits: 2, Better: "higher"},
	{ID: "rss_mib", Label: "server RSS growth during the broadcast (peak)", Unit: "MiB", Digits: 1, Better: "lower"},
	{ID: "rss_before_mib", Label: "server RSS with the connections, before", Unit: "MiB", Digits: 1, Better: "lower"},
	{ID: "other_pct", Label: "CPU 0 busy with other tasks (noise; interrupts left out)", Unit: "%", Digits: 1},
	{ID: "client_pct", Label: "load tool's CPU, of its core", Unit: "%", Digits: 0},
}

var wsStallMetrics = append(slices.Clone(wsBcastMetrics[:len(wsBcastMetrics)-2]),
	Metric{ID: "stalled_closed", Label: "stalled clients the server closed", Unit: ""},
	Metric{ID: "stalled_pct", Label: "frames that reached the stalled clients once they read", Unit: "%", Digits: 1},
	Metric{ID: "other_pct", Label: "CPU 0 busy with other tasks (noise; interrupts left out)", Unit: "%", Digits: 1},
	Metric{ID: "client_pct", Label: "load tool's CPU, of its core", Unit: "%", Digits: 0},
)

var wsSpecs = []*figureSpec{
	{id: "ws-idle", title: "WebSocket: memory per idle connection", ws: true, metrics: wsIdleMetrics,
		measure: wsIdleFigure("/echo", false)},
	{id: "ws-idle-deflate", title: "WebSocket: memory per idle connection, permessage-deflate", ws: true,
		metrics: wsIdleMetrics, measure: wsIdleFigure("/echo-deflate", true)},
	{id: "ws-echo", title: fmt.Sprintf("WebSocket: echo of %d-byte messages, %d connections", wsMessageSize, wsEchoConns),
		ws: true, metrics: wsEchoMetrics, measure: wsEchoFigure("/echo", wsEchoConns, false)},
	{id: "ws-c1", title: fmt.Sprintf("WebSocket: echo of %d-byte messages, one connection", wsMessageSize),
		ws: true, metrics: wsEchoMetrics, measure: wsEchoFigure("/echo", 1, false)},
	{id: "ws-bcast", title: fmt.Sprintf("WebSocket: broadcast of %d bytes every %s", wsBcastSize, wsBcastEvery),
		ws: true, metrics: wsBcastMetrics, measure: wsBcastFigure(0)},
	{id: "ws-stall", title: fmt.Sprintf("WebSocket: broadcast with %d clients that stop reading", wsStalled),
		ws: true, metrics: wsStallMetrics, measure: wsBcastFigure(wsStalled)},
	{id: "ws-deflate", title: fmt.Sprintf("WebSocket: compressed echo of a %d-byte JSON text, %d connections", wsMessageSize, wsEchoConns),
		ws: true, metrics: wsEchoMetrics, measure: wsEchoFigure("/echo-deflate", wsEchoConns, true)},
}

func init() { specs = append(specs, wsSpecs...) }

// wsFigureIDs are the WebSocket figures' ids, in order.
func wsFigureIDs() []string {
	ids := make([]string, len(wsSpecs))
	for i, s := range wsSpecs {
		ids[i] = s.id
	}
	return ids
}

// buildWS builds the WebSocket servers and returns the contenders asked for, each a server
// that lacks every figure but the WebSocket ones it takes part in. A server that does not build
// is skipped with the reason.
func (r *runner) buildWS(ctx context.Context, names []string) []*server {
	bins := map[string]string{}
	var out []*server
	for _, c := range wsContenders {
		if !slices.Contains(names, c.name) {
			continue
		}
		bin, ok := bins[c.dir]
		if !ok {
			bin = filepath.Join(r.work, "bin", c.dir)
			if goFiles, _ := filepath.Glob(filepath.Join(r.benchDir, "servers", c.dir, "*.go")); len(goFiles) == 0 {
				bin = ""
				r.skip(c.name, fmt.Sprintf("bench/servers/%s does not exist", c.dir))
			} else if err := r.goBuild(ctx, bin, "./servers/"+c.dir); err != nil {
				bin = ""
				r.skip(c.name, fmt.Sprintf("does not build: %v", err))
			}
			bins[c.dir] = bin
		}
		if bin == "" {
			if _, skipped := r.res.Skipped[c.name]; !skipped {
				r.skip(c.name, fmt.Sprintf("bench/servers/%s does not build", c.dir))
			}
			continue
		}
		s := &server{name: c.name, bin: bin, args: c.args, ws: true, lacks: map[string]string{}}
		for _, id := range figureIDs() {
			if !slices.Contains(wsFigureIDs(), id) {
				s.lacks[id] = "not a WebSocket figure"
			} else if c.figures != nil && !slices.Contains(c.figures, id) {
				s.lacks[id] = c.why
			}
		}
		s.lacks["allocs"] = "not a WebSocket figure"
		s.version = startedWithVersion(c.name, r.wsVersion(c.name, bin))
		out = append(out, s)
	}
	return out
}

// wsVersion is what the report says a contender runs.
func (r *runner) wsVersion(name, bin string) string {
	dwell := r.goServerVersion("dwell", bin)
	switch mod := wsModules[name]; {
	case name == "dwell-gorilla":
		return dwell + ", with " + mod + " " + moduleVersion(bin, mod)
	case mod != "":
		return mod + " " + moduleVersion(bin, mod)
	}
	return dwell
}

// wsIdleFigure holds 1,000 then 5,000 upgraded connections, each having echoed one message,
// and reads the server's RSS before the first and at both counts.
func wsIdleFigure(path string, deflate bool) func(context.Context, *runner, *measurement) (map[string]float64, error) {
	return func(ctx context.Context, r *runner, m *measurement) (map[string]float64, error) {
		var res struct {
			BytesPerConn float64 `json:"bytes_per_conn"`
			RSS0         int64   `json:"rss0_bytes"`
			Checkpoints  []struct {
				Conns int   `json:"conns"`
				RSS   int64 `json:"rss_bytes"`
			} `json:"checkpoints"`
			Extension string `json:"extension"`
		}
		args := []string{"ws-idle", "-addr", m.rs.addr, "-pid", strconv.Itoa(m.rs.pid), "-path", path,
			"-n", strconv.Itoa(r.cfg.conns), "-at", fmt.Sprintf("1000,%d", r.cfg.conns), "-size", strconv.Itoa(wsMessageSize)}
		if deflate {
			args = append(args, "-deflate")
		}
		if err := r.runLoad(ctx, m, &res, args...); err != nil {
			return nil, err
		}
		if len(res.Checkpoints) < 2 {
			return nil, fmt.Errorf("%d checkpoints", len(res.Checkpoints))
		}
		first, last := res.Checkpoints[0], res.Checkpoints[len(res.Checkpoints)-1]
		m.note = res.Extension
		return map[string]float64{
			"kib":       res.BytesPerConn / 1024,
			"kib_first": float64(first.RSS-res.RSS0) / float64(first.Conns) / 1024,
			"kib_all":   float64(last.RSS-res.RSS0) / float64(last.Conns) / 1024,
			"base_mib":  float64(first.RSS) / (1 << 20),
		}, nil
	}
}

// wsEchoFigure runs the load tool's closed-loop echo over conns connections: a warm-up, then
// wrk's duration measured. A run during which something else took much of the server's core
// is run again once, while the run's retry budget lasts, and the quieter kept (as wrk's are).
func wsEchoFigure(path string, conns int, deflate bool) func(context.Context, *runner, *measurement) (map[string]float64, error) {
	return func(ctx context.Context, r *runner, m *measurement) (map[string]float64, error) {
		args := []string{"ws-echo", "-addr", m.rs.addr, "-pid", strconv.Itoa(m.rs.pid), "-path", path,
			"-c", strconv.Itoa(conns), "-warm", r.wsWarm(), "-d", fmt.Sprintf("%ds", r.cfg.wrkSecs),
			"-size", strconv.Itoa(wsMessageSize), "-server-cpu", serverCPU}
		if deflate {
			args = append(args, "-deflate")
		}
		once := func() (map[string]float64, error) {
			var res struct {
				CPUus     float64 `json:"cpu_us_per_msg"`
				MsgPerSec float64 `json:"msg_per_sec"`
				P50       float64 `json:"p50_us"`
				P99       float64 `json:"p99_us"`
				Other     float64 `json:"other_pct"`
				Client    float64 `json:"client_pct"`
				Extension string  `json:"extension"`
			}
			if err := r.runLoad(ctx, m, &res, args...); err != nil {
				return nil, err
			}
			m.note = res.Extension
			return map[string]float64{"cpu_us": res.CPUus, "mps": res.MsgPerSec, "p50_us": res.P50,
				"p99_us": res.P99, "other_pct": res.Other, "client_pct": res.Client}, nil
		}
		return r.quieter(m, once)
	}
}

// quieter runs measure, and once more when the server's core was busy with something else
// for more than noisyPct of the run (while the run's retry budget lasts), keeping the quieter.
func (r *runner) quieter(m *measurement, measure func() (map[string]float64, error)) (map[string]float64, error) {
	vals, err := measure()
	if err != nil || vals["other_pct"] <= noisyPct || r.retries <= 0 {
		return vals, err
	}
	r.retries--
	r.logf("%s: CPU %s was %.0f%% busy outside the server; measuring again", m.srv.name, serverCPU, vals["other_pct"])
	cmds := len(m.cmds)
	again, err := measure()
	m.cmds = m.cmds[:cmds]
	if err != nil || again["other_pct"] >= vals["other_pct"] {
		return vals, nil
	}
	return again, nil
}

// wsBcastFigure connects the run's connections to the broadcast (stalled of them never reading)
// and has the server broadcast wsTicks messages.
func wsBcastFigure(stalled int) func(context.Context, *runner, *measurement) (map[string]float64, error) {
	return func(ctx context.Context, r *runner, m *measurement) (map[string]float64, error) {
		args := []string{"ws-bcast", "-addr", m.rs.addr, "-pid", strconv.Itoa(m.rs.pid),
			"-n", strconv.Itoa(r.cfg.conns), "-stalled", strconv.Itoa(stalled), "-ticks", strconv.Itoa(r.wsTicks()),
			"-interval", wsBcastEvery, "-size", strconv.Itoa(wsBcastSize), "-server-cpu", serverCPU}
		once := func() (map[string]float64, error) {
			var res struct {
				CPUus         float64 `json:"cpu_us_per_frame"`
				P50           float64 `json:"p50_us"`
				P99           float64 `json:"p99_us"`
				DeliveredFrac float64 `json:"delivered_frac"`
				RSSGrowth     int64   `json:"rss_peak_growth_bytes"`
				RSSBefore     int64   `json:"rss_before_bytes"`
				StalledClosed int     `json:"stalled_closed"`
				StalledFrac   float64 `json:"stalled_frac"`
				Other         float64 `json:"other_pct"`
				Client        float64 `json:"client_pct"`
			}
			if err := r.runLoad(ctx, m, &res, args...); err != nil {
				return nil, err
			}
			vals := map[string]float64{"cpu_us": res.CPUus, "p50_ms": res.P50 / 1e3, "p99_ms": res.P99 / 1e3,
				"delivered_pct": res.DeliveredFrac * 100, "rss_mib": float64(res.RSSGrowth) / (1 << 20),
				"rss_before_mib": float64(res.RSSBefore) / (1 << 20), "other_pct": res.Other, "client_pct": res.Client}
			if stalled > 0 {
				vals["stalled_closed"] = float64(res.StalledClosed)
				vals["stalled_pct"] = res.StalledFrac * 100
			}
			return vals, nil
		}
		return r.quieter(m, once)
	}
}

// wsServerCommands writes, for the report, how the WebSocket servers start.
func (r *runner) wsServerCommands(b *strings.Builder) {
	for _, s := range r.res.WSServers {
		if c, ok := r.serverCmds["ws:"+s]; ok {
			b.WriteString(c + "\n")
		}
	}
}

// wsWanted expands the -ws flag.
func wsWanted(list string) ([]string, error) {
	if list == "none" {
		return nil, nil
	}
	names := splitList(list)
	for _, n := range names {
		if !slices.Contains(wsContenderNames(), n) {
			return nil, fmt.Errorf("unknown WebSocket contender %q (known: %s)", n, strings.Join(wsContenderNames(), ","))
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		return slices.Index(wsContenderNames(), a) - slices.Index(wsContenderNames(), b)
	})
	return names, nil
}

// hasHTTP reports whether any figure asked for is an HTTP one measured on the run's servers
// (the WebSocket, rate-limit and HTTP/2 figures have contenders of their own).
func hasHTTP(figs []string) bool {
	for _, f := range figs {
		if !slices.Contains(wsFigureIDs(), f) && !slices.Contains(rlFigureIDs(), f) && !slices.Contains(h2FigureIDs(), f) &&
			!slices.Contains(grpcFigureIDs(), f) {
			return true
		}
	}
	return false
}

// hasWS reports whether any figure asked for is a WebSocket one.
func hasWS(figs []string) bool {
	for _, f := range figs {
		if slices.Contains(wsFigureIDs(), f) {
			return true
		}
	}
	return false
}
