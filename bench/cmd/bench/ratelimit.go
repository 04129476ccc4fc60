package main

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// The rate-limit figures: what a rate limiter keyed on the client's address costs a request,
// dwell's middleware.RateLimit beside github.com/go-chi/httprate on net/http (LimitByIP, what
// chi's users take). Each contender is a server of its own (bench/servers/dwell-ratelimit,
// bench/servers/nethttp-httprate) that answers GET /hello bare and behind its limiter, at
// /limited/hello with a limit no run reaches and at /refused/hello with one request an hour.
// wrk's connections all come from 127.0.0.1: one key, seen on every request but the first.
// The figures have their own columns, and their ratios are to httprate.

// rlContenders are the rate-limit figures' columns, in report order, each a directory of
// bench/servers.
// dwell-ratelimit-uring is dwell-ratelimit's binary on io_uring (startedWith).
var rlContenders = []string{"nethttp-httprate", "dwell-ratelimit", "dwell-ratelimit-uring"}

// rlPeers are the contenders the ratios are taken against.
var rlPeers = []string{"nethttp-httprate"}

// rlModules maps a contender to the module whose version the report shows.
var rlModules = map[string]string{"nethttp-httprate": "github.com/go-chi/httprate"}

var rlPassMetrics = []Metric{
	{ID: "cpu_us", Label: "server CPU per request, behind the limiter", Unit: "µs", Digits: 2, Better: "lower"},
	{ID: "cpu_base_us", Label: "server CPU per request, the same server without it (GET /hello)", Unit: "µs", Digits: 2, Better: "lower"},
	{ID: "cpu_added_us", Label: "what the limiter adds per request", Unit: "µs", Digits: 2, Better: "lower"},
	{ID: "allocs", Label: "allocations per request, behind the limiter", Unit: "allocs", Better: "lower"},
	{ID: "rps", Label: "requests per second, behind the limiter", Unit: "req/s", Better: "higher"},
	{ID: "p50_us", Label: "latency p50", Unit: "µs", Better: "lower"},
	{ID: "p99_us", Label: "latency p99", Unit: "µs", Better: "lower"},
	{ID: "errors", Label: "errors (wrk; a 429 is one)", Unit: ""},
	{ID: "other_pct", Label: "CPU 0 busy outside the server (noise)", Unit: "%", Digits: 1},
}

var rlRefusedMetrics = []Metric{
	{ID: "cpu_us", Label: "server CPU per refused request", Unit: "µs", Digits: 2, Better: "lower"},
	{ID: "allocs", Label: "allocations per refused request", Unit: "allocs", Better: "lower"},
	{ID: "rps", Label: "refusals per second", Unit: "req/s", Better: "higher"},
	{ID: "p50_us", Label: "latency p50", Unit: "µs", Better: "lower"},
	{ID: "p99_us", Label: "latency p99", Unit: "µs", Better: "lower"},
	{ID: "refused_pct", Label: "answers that were 429", Unit: "%", Digits: 1},
	{ID: "other_pct", Label: "CPU 0 busy outside the server (noise)", Unit: "%", Digits: 1},
}

var rlSpecs = []*figureSpec{
	{id: "ratelimit", title: "Rate limit per client address, under the limit", rl: true, metrics: rlPassMetrics,
		measure: rlPassFigure},
	{id: "ratelimit-429", title: "Rate limit per client address, over the limit (429)", rl: true, metrics: rlRefusedMetrics,
		measure: rlRefusedFigure},
}

func init() {
	specs = append(specs, rlSpecs...)
	meanings["ratelimit"] = "The hello figure's load (wrk -c50, keep-alive) through a rate limiter keyed on the " +
		"client's address, with a limit no run reaches: every request is counted and passes, its key already " +
		"seen (wrk's connections all come from 127.0.0.1). dwell's middleware.RateLimit (GCRA in a fixed " +
		"table, the IETF RateLimit and RateLimit-Policy fields on every response) beside go-chi/httprate's " +
		"LimitByIP on net/http (a sliding window counter, X-RateLimit-Limit, -Remaining and -Reset on every " +
		"response). Each server is also measured without its limiter, at GET /hello, in the same process " +
		"right before: the difference is what the limiter adds to a request. Allocations are from " +
		"`go test -bench RateLimit -benchmem ./allocs/`, the servers in the benchmark's process."
	meanings["ratelimit-429"] = "The same load against a limit of one request an hour: every request but " +
		"the first is refused with 429, Retry-After and each limiter's fields, in plain text (dwell's " +
		"middleware without a WriteRefusal, httprate's http.Error). What a client hammering past its limit " +
		"costs the server."
}

// rlFigureIDs are the rate-limit figures' ids, in order.
func rlFigureIDs() []string {
	ids := make([]string, len(rlSpecs))
	for i, s := range rlSpecs {
		ids[i] = s.id
	}
	return ids
}

// hasRL reports whether any figure asked for is a rate-limit one.
func hasRL(figs []string) bool {
	return slices.ContainsFunc(figs, func(f string) bool { return slices.Contains(rlFigureIDs(), f) })
}

// buildRL builds the rate-limit contenders, each a server that lacks every figure but the
// rate-limit ones. A server that does not build is skipped with the reason.
func (r *runner) buildRL(ctx context.Context) []*server {
	var out []*server
	for _, name := range rlContenders {
		bin, ok := r.buildContender(ctx, name)
		if !ok {
			continue
		}
		s := &server{name: name, bin: bin, lacks: map[string]string{"allocs": "measured in the rate-limit figures"}}
		for _, id := range figureIDs() {
			if !slices.Contains(rlFigureIDs(), id) {
				s.lacks[id] = "not a rate-limit figure"
			}
		}
		s.version = startedWithVersion(name, r.goServerVersion("dwell", bin))
		if mod, ok := rlModules[name]; ok {
			s.version = mod + " " + moduleVersion(bin, mod) + " on net/http of " + r.meta.GoVersion
		}
		out = append(out, s)
	}
	return out
}

// rlPassFigure measures the server bare (GET /hello) and then behind its limiter (GET
// /limited/hello), each as the hello figure is measured, and reports the second with the
// difference.
func rlPassFigure(ctx context.Context, r *runner, m *measurement) (map[string]float64, error) {
	base, err := wrkFigure(wrkLoad{path: "/hello", conns: wrkConns})(ctx, r, m)
	if err != nil {
		return nil, err
	}
	vals, err := wrkFigure(wrkLoad{path: "/limited/hello", conns: wrkConns})(ctx, r, m)
	if err != nil {
		return nil, err
	}
	vals["cpu_base_us"] = base["cpu_us"]
	vals["cpu_added_us"] = vals["cpu_us"] - base["cpu_us"]
	vals["other_pct"] = max(vals["other_pct"], base["other_pct"])
	return vals, nil
}

// rlRefusedFigure measures the server against /refused/hello, where all but the first request
// are refused.
func rlRefusedFigure(ctx context.Context, r *runner, m *measurement) (map[string]float64, error) {
	vals, err := wrkFigure(wrkLoad{path: "/refused/hello", conns: wrkConns})(ctx, r, m)
	if err != nil {
		return nil, err
	}
	if vals["requests"] > 0 {
		vals["refused_pct"] = vals["status_errors"] / vals["requests"] * 100
	}
	return vals, nil
}

// rlAllocsCommand is the benchmark behind the allocation rows of the rate-limit figures.
const rlAllocsCommand = "go test -run '^$' -bench RateLimit -benchmem -benchtime 20000x -count 3 ./allocs/"

// rlAllocs runs rlAllocsCommand and adds its allocations per request to the rate-limit
// figures of the run: BenchmarkRateLimit/NAME to ratelimit, BenchmarkRateLimitRefused/NAME
// to ratelimit-429. A failure leaves the rows empty (n/a), and is logged.
func (r *runner) rlAllocs(ctx context.Context) {
	figs := map[string]*Figure{"BenchmarkRateLimit": r.res.figure("ratelimit"), "BenchmarkRateLimitRefused": r.res.figure("ratelimit-429")}
	r.logf("allocs: %s", rlAllocsCommand)
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "RateLimit", "-benchmem", "-benchtime", "20000x", "-count", "3", "./allocs/")
	cmd.Dir = r.benchDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.logf("allocs: %v\n%s", err, out)
		return
	}
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 {
			continue
		}
		bench, srv, ok := strings.Cut(fields[0], "/")
		f := figs[bench]
		if !ok || f == nil {
			continue
		}
		srv = strings.TrimRightFunc(srv, func(c rune) bool { return c >= '0' && c <= '9' })
		srv = strings.TrimSuffix(srv, "-") // the -GOMAXPROCS suffix, when there is one
		if !slices.Contains(rlContenders, srv) {
			continue
		}
		seen[fields[0]]++
		for i := 2; i+1 < len(fields); i += 2 {
			if fields[i+1] != "allocs/op" {
				continue
			}
			if v, err := strconv.ParseFloat(fields[i], 64); err == nil {
				f.metric("allocs").add(srv, seen[fields[0]], v)
			}
		}
	}
	for _, f := range figs {
		if f != nil {
			f.Commands = append(f.Commands, "cd bench && "+rlAllocsCommand)
		}
	}
}

// rlServerCommands writes, for the report, how the rate-limit servers start.
func (r *runner) rlServerCommands(b *strings.Builder) {
	for _, s := range rlContenders {
		if c, ok := r.serverCmds[s]; ok {
			b.WriteString(c + "\n")
		}
	}
}
