package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The gRPC figure: whether many open gRPC streams cost the other calls of a server their
// latency. Each contender is a server of its own serving the same service (bench/servers/grpc-*,
// the feed and health services of bench/internal/grpcfeed): grpc-go's own server, grpc-go behind
// net/http (ServeHTTP, h2c) with a REST route beside it, and dwell as examples/grpc sets it up
// (the net/http bridge, each method on a route, the streaming ones in a nethttp.Pool of their
// own, a dwell handler for the REST route). The load tool's grpc-streams mode times unary calls
// and REST GETs alone, then with grpcStreams Follow streams open and a message a second published
// to all of them. The figure has its own columns; its ratios are to the best peer.

// grpcContenders are the gRPC figure's columns, in report order, each a directory of
// bench/servers.
// grpc-dwell-uring is grpc-dwell's binary on io_uring (startedWith).
var grpcContenders = []string{"grpc-go", "grpc-nethttp", "grpc-dwell", "grpc-dwell-uring"}

// grpcPeers are the contenders the ratios are taken against.
var grpcPeers = []string{"grpc-go", "grpc-nethttp"}

// The load: streams over connections of 100 (dwell's SETTINGS_MAX_CONCURRENT_STREAMS), probes
// in flight, messages published a second while the streams are open.
const (
	grpcStreams = 2000
	grpcConns   = 20
	grpcProbes  = 4
	grpcPublish = 1
)

var grpcMetrics = []Metric{
	{ID: "unary_ratio", Label: "unary call p99 with the streams open, over without", Unit: "×", Digits: 2, Better: "lower"},
	{ID: "unary_p99_us", Label: "unary call p99, streams open", Unit: "µs", Better: "lower"},
	{ID: "unary_p99_base_us", Label: "unary call p99, no stream", Unit: "µs", Better: "lower"},
	{ID: "rest_ratio", Label: "REST GET p99 with the streams open, over without", Unit: "×", Digits: 2, Better: "lower"},
	{ID: "rest_p99_us", Label: "REST GET p99, streams open", Unit: "µs", Better: "lower"},
	{ID: "rest_p99_base_us", Label: "REST GET p99, no stream", Unit: "µs", Better: "lower"},
	{ID: "stream_kib", Label: "RSS per open stream", Unit: "KiB", Digits: 1, Better: "lower"},
	{ID: "cpu_pct", Label: "server CPU with the streams open (probes and publishes)", Unit: "%", Digits: 0},
	{ID: "fanout_ms", Label: "a publish to every stream: from the last publish sent until the last stream had it", Unit: "ms", Digits: 1, Better: "lower"},
	{ID: "lost", Label: "streams' copies of the messages missing 10 s after the last publish", Unit: ""},
}

var grpcSpecs = []*figureSpec{
	{id: "grpc-streams", title: fmt.Sprintf("gRPC: unary calls and a REST route beside %s open streams", fmtNum(grpcStreams, 0)),
		grpc: true, metrics: grpcMetrics, measure: grpcStreamsFigure},
}

func init() {
	specs = append(specs, grpcSpecs...)
	meanings["grpc-streams"] = fmt.Sprintf("grpc-go's client makes unary calls (grpc.health.v1 Health/Check, %d in "+
		"flight on one connection) and a REST client GETs /hello (%d keep-alive connections) for wrk's duration "+
		"each, first with nothing else open, then with %s Follow streams of a feed open over %d connections and "+
		"%d message a second published to all of them (as many sends a second as there are streams); the ratios say how much the open streams slow the other calls "+
		"(2 or under is the target). The same service everywhere (bench/internal/grpcfeed); grpc-go's own server "+
		"has no REST route.", grpcProbes, grpcProbes, fmtNum(grpcStreams, 0), grpcConns, grpcPublish)
}

// grpcFigureIDs are the gRPC figures' ids.
func grpcFigureIDs() []string {
	ids := make([]string, len(grpcSpecs))
	for i, s := range grpcSpecs {
		ids[i] = s.id
	}
	return ids
}

// hasGRPC reports whether any figure asked for is a gRPC one.
func hasGRPC(figs []string) bool {
	return slices.ContainsFunc(figs, func(f string) bool { return slices.Contains(grpcFigureIDs(), f) })
}

// buildGRPC builds the gRPC contenders, each a server that lacks every figure but the gRPC ones.
func (r *runner) buildGRPC(ctx context.Context) []*server {
	var out []*server
	for _, name := range grpcContenders {
		bin, ok := r.buildContender(ctx, name)
		if !ok {
			continue
		}
		s := &server{name: name, bin: bin, grpc: true, lacks: map[string]string{"allocs": "not a gRPC figure"}}
		for _, id := range figureIDs() {
			if !slices.Contains(grpcFigureIDs(), id) {
				s.lacks[id] = "not a gRPC figure"
			}
		}
		s.version = "google.golang.org/grpc " + moduleVersion(bin, "google.golang.org/grpc")
		switch measuredAs(name) {
		case "grpc-dwell":
			s.version = startedWithVersion(name, r.goServerVersion("dwell", bin)+", "+s.version)
		default:
			s.version += " on Go " + r.meta.GoVersion
		}
		out = append(out, s)
	}
	return out
}

// grpcStreamsFigure runs the load tool's grpc-streams mode against the server.
func grpcStreamsFigure(ctx context.Context, r *runner, m *measurement) (map[string]float64, error) {
	args := []string{"grpc-streams", "-addr", m.rs.addr, "-pid", strconv.Itoa(m.rs.pid),
		"-streams", strconv.Itoa(grpcStreams), "-conns", strconv.Itoa(grpcConns), "-c", strconv.Itoa(grpcProbes),
		"-d", fmt.Sprintf("%ds", r.cfg.wrkSecs), "-publish", strconv.Itoa(grpcPublish)}
	if m.srv.name != "grpc-go" {
		args = append(args, "-rest", "/hello")
	}
	var res struct {
		UnaryBase float64 `json:"unary_p99_base_us"`
		Unary     float64 `json:"unary_p99_us"`
		RESTBase  float64 `json:"rest_p99_base_us"`
		REST      float64 `json:"rest_p99_us"`
		RSSBase   int64   `json:"rss_base_bytes"`
		RSS       int64   `json:"rss_bytes"`
		FanoutMs  float64 `json:"fanout_ms"`
		Lost      int64   `json:"lost"`
		CPUPct    float64 `json:"cpu_pct"`
	}
	if err := r.runLoad(ctx, m, &res, args...); err != nil {
		return nil, err
	}
	vals := map[string]float64{
		"unary_p99_us": res.Unary, "unary_p99_base_us": res.UnaryBase,
		"stream_kib": float64(res.RSS-res.RSSBase) / 1024 / grpcStreams, "cpu_pct": res.CPUPct,
		"lost": float64(res.Lost),
	}
	if res.Lost == 0 {
		vals["fanout_ms"] = res.FanoutMs
	}
	if res.UnaryBase > 0 {
		vals["unary_ratio"] = res.Unary / res.UnaryBase
	}
	if m.srv.name != "grpc-go" {
		vals["rest_p99_us"], vals["rest_p99_base_us"] = res.REST, res.RESTBase
		if res.RESTBase > 0 {
			vals["rest_ratio"] = res.REST / res.RESTBase
		}
	}
	return vals, nil
}

// grpcServerCommands writes, for the report, how the gRPC servers start.
func (r *runner) grpcServerCommands(b *strings.Builder) {
	for _, s := range grpcContenders {
		if c, ok := r.serverCmds[s]; ok {
			b.WriteString(c + "\n")
		}
	}
}
