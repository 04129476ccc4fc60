package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// summaryRows are the report's first table, one figure per row, in the order of the design's
// "Figures to reach".
var summaryRows = []struct{ fig, metric, label string }{
	{"hello", "cpu_us", "hello keep-alive: server CPU µs per request"},
	{"hello", "rps", "hello keep-alive: requests per second (wrk -c50)"},
	{"hello", "p99_us", "hello keep-alive: p99 latency µs"},
	{"c1", "cpu_us", "hello, one connection: server CPU µs per request"},
	{"c1", "p50_us", "hello, one connection: p50 latency µs"},
	{"c1", "p99_us", "hello, one connection: p99 latency µs"},
	{"allocs", "allocs", "allocations per request (hello)"},
	{"std", "cpu_us", "hello from a net/http handler: server CPU µs per request"},
	{"close", "cpu_us", "hello with Connection: close: server CPU µs per request"},
	{"file", "cpu_us", "254-byte file: server CPU µs per request"},
	{"fs", "cpu_us", "254-byte file of an embed.FS: server CPU µs per request"},
	{"pipeline", "cpu_us", fmt.Sprintf("hello pipelined %d deep: server CPU µs per request", pipelineDepth)},
	{"pipeline", "rps", fmt.Sprintf("hello pipelined %d deep: requests per second", pipelineDepth)},
	{"idle", "kib", "idle keep-alive connection: KiB of server RSS"},
	{"park", "kib", "parked long poll: KiB of server RSS"},
	{"download", "gbps", "download over one connection: GB/s"},
	{"upload", "gbps", "upload over one connection: GB/s"},
	{"upload", "rss_mib", "upload: server RSS growth, MiB"},
	{"startup", "ms", "start to first response: ms"},
}

// noRatio are metrics whose ratio to another server means nothing.
var noRatio = map[string]bool{"errors": true, "other_pct": true, "rss_mib": true, "client_pct": true, "resumed_pct": true}

// meanings explain each figure in the report.
var meanings = map[string]string{
	"hello": "wrk keeps 50 connections open and sends the next request as soon as an answer arrives. " +
		"**Server CPU per request** is the server's CPU time during the run (from /proc, all its threads) " +
		"divided by the requests wrk completed: the cost of a request, independent of how fast the " +
		"client on the other core can go. Requests per second on two cores are bounded by wrk as much " +
		"as by the server, so compare CPU per request first. This is the figure that matters most: " +
		"browsers, HTTP clients and every proxy keep connections alive.",
	"c1": "The hello figure's requests over one connection (wrk -c1): each request waits for the " +
		"previous answer, so the server sleeps in epoll between requests and every request pays a " +
		"wake-up, a read and a write. Server CPU per request here is the cost of a request to a " +
		"server that is mostly idle, and the latencies are a round trip through the server, which " +
		"is what a lone client sees. A server that spins while idle shows it here. A Go server that " +
		"parks its goroutines also pays the runtime's scheduler at every wake-up (design.md, Where the " +
		"CPU goes, says why dwell's loop parks in the netpoller). Profiled per request (`perf record` " +
		"of the server's CPU for 3 s under wrk -c1, divided by the requests; measured once, on " +
		"2026-12-01's code, not by make bench): the kernel's work was 7.7 µs for dwell and 7.3 µs for " +
		"nginx, the server's own code 1.0 µs for dwell and 2.5 µs for nginx (with libc), and Go's " +
		"runtime 2.0 µs for dwell (findRunnable, netpoll, clock reads) and next to nothing for nginx. " +
		"An exchange costs dwell one read, one write and four epoll_pwait, nginx one epoll_wait. A " +
		"blocking epoll_wait in a system call took the row from 1.06–1.23× nginx to 0.89–1.11× in " +
		"the same rounds, but made a request answered by a net/http handler behind the bridge about " +
		"six times slower (p50 latency 25 → 149 µs, 38,000 → 6,700 requests a second at -c1).",
	"pipeline": fmt.Sprintf("The hello figure's 50 connections, each sending %d requests in one write "+
		"and the next %d once all %d answers have arrived (HTTP/1.1 pipelining, the wrk script "+
		"`$WORK/pipeline.lua`). A server can read the batch with one read and answer it with one "+
		"write, so this is its per-request work with the syscalls mostly shared: parsing, routing "+
		"and assembling responses. Latencies are per batch, from its write to its last answer. "+
		"Few clients pipeline; batched clients and synthetic benchmarks do.", pipelineDepth, pipelineDepth, pipelineDepth),
	"std": "The hello figure's requests to GET /std/hello, answered by one plain net/http handler " +
		"(Header().Set, io.WriteString) that every server runs the way it runs such handlers: net/http " +
		"and nbio natively, dwell through router.HandleHTTP (the handler on a pooled goroutine, the " +
		"response handed to the loop), fasthttp through fasthttpadaptor. It is the price of bringing " +
		"an existing net/http handler along. nginx runs no Go handlers.",
	"close": "The same requests with `Connection: close`: each request pays for accept, a new " +
		"connection's state and the close. Clients rarely do this; a proxy without upstream " +
		"keep-alive does. Each server runs with its default listener: dwell's defers accepting " +
		"until a connection's request has arrived (TCP_DEFER_ACCEPT), and then reads, answers and " +
		"closes it without a wake-up or an epoll_ctl of its own; nginx does the same with " +
		"`listen ... deferred`, which its default configuration, used here, does not set. Counted " +
		"once with perf's syscall tracepoints (2026-12-01's code, not by make bench), a Connection: " +
		"close exchange took dwell 4.2 system calls and nginx 6.2.",
	"file": "A 254-byte file served with each server's own file serving (http.ServeFile, " +
		"fasthttp.ServeFile, nginx's static module, ...), with its stat, headers and small body copy.",
	"fs": "The same 254 bytes as a file of an embed.FS compiled into the server, served with each " +
		"server's own serving of an fs.FS (router.ServeFS, http.FileServerFS, fasthttp.ServeFS): its " +
		"validators (an ETag from the content where the FS has no modification times), headers and " +
		"copy. nginx has no embedded files and serves the same bytes from disk.",
	"idle": "The load tool opens 1,000 connections, sends one GET /hello on each and reads the answer, " +
		"waits for the server to go quiet and reads its VmRSS; then the same at 5,000. " +
		"(RSS@5000 − RSS@1000) / 4000 is what one idle keep-alive connection costs the server, its fixed " +
		"start-up memory cancelled out. This is what a server pays for every open browser tab or pooled client connection.",
	"park": "As for idle connections, but each connection sends GET /poll, which the server parks until a " +
		"POST /release answers all of them: the memory of a waiting handler (goroutine, buffers, request state). " +
		"The release time is from sending the release to the last of the 5,000 answers. nginx has no long poll of its own.",
	"download": "One GET /download?n=SIZE over one connection, read by the load tool through a 256 KiB buffer; " +
		"the server's RSS is sampled every 2 ms and the peak growth reported. Loopback rates are bounded by " +
		"memory bandwidth and by the client, so they show whether a server keeps up, not a network's speed. " +
		"nginx sends a sparse file of that size with sendfile.",
	"upload": "One POST /upload of SIZE bytes with a Content-Length; the server counts the body as it " +
		"arrives and answers with the count, which the load tool checks. RSS growth shows whether a server " +
		"streams the body (a few buffers) or holds it whole (nbio does). nginx discards the body (`return` " +
		"after reading) and answers with the declared length: a discard rate.",
	"startup": "The load tool execs the server (through taskset) and polls GET /hello every 100 µs until the " +
		"first 200: exec, runtime start, listen and the first answer.",
	"allocs": "Allocations per request on the hello path, from `go test -bench -benchmem` (package " +
		"bench/allocs): each Go server serves GET /hello in the benchmark's process while a client that " +
		"allocates nothing sends keep-alive requests, so allocs/op is the server's. nginx is not a Go " +
		"program and has no such count.",
}

// writeReport writes performance.md, perf.svg and perf.json into the output directory.
func (r *runner) writeReport() error {
	if err := os.MkdirAll(r.out, 0o755); err != nil {
		return err
	}
	if err := r.res.writeJSON(filepath.Join(r.out, "perf.json")); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.out, "perf.svg"), []byte(chartSVG(&r.res)), 0o644); err != nil {
		return err
	}
	md := filepath.Join(r.out, "performance.md")
	if err := os.WriteFile(md, []byte(r.markdown()), 0o644); err != nil {
		return err
	}
	r.logf("wrote %s, perf.svg and perf.json", md)
	return nil
}

func (r *runner) markdown() string {
	var b strings.Builder
	res := &r.res
	m := res.Meta
	mode := "full run"
	if m.Quick {
		mode = "quick run (one short round: a smoke test, not figures to quote)"
	}
	fmt.Fprintf(&b, "# Performance\n\n")
	fmt.Fprintf(&b, "Generated by `bench/cmd/bench` on %s, %s, in %.0f s. Do not edit by hand: rerun "+
		"`%s bench` (see [How to rerun](#how-to-rerun)) and commit the new files.\n\n", m.Date, mode, m.Seconds, r.makeCommand())
	fmt.Fprintf(&b, "Each figure is the median over %s; the tables by figure add the range (min–max) "+
		"when there are several rounds, and the ratio to net/http (in parentheses in the summary), the median "+
		"of the per-round ratios; server CPU per request is also compared with nginx's and fasthttp's. A rerun "+
		"on the same machine should fall within the ranges shown.\n\n", rounds(m.Rounds))
	if len(res.WSServers) > 0 {
		b.WriteString("The WebSocket figures have contenders of their own, and their ratios are to the best " +
			"peer of each row instead (see [WebSocket](#websocket)).\n\n")
	}
	if hasTLS(r.cfg.figures) {
		b.WriteString("The HTTPS figures measure dwell, nginx and net/http, with ratios to nginx as well (see " +
			"[HTTPS](#https)).\n\n")
	}

	if len(res.Servers) > 0 && r.hasSummary() {
		b.WriteString("## Summary\n\n")
		r.summaryTable(&b)
	}
	if len(res.Skipped) > 0 {
		b.WriteString("\nNot measured:\n\n")
		for _, name := range sortedKeys(res.Skipped) {
			fmt.Fprintf(&b, "- %s: %s\n", name, res.Skipped[name])
		}
	}
	r.fellBackNotes(&b)
	b.WriteString("\n![Server CPU per keep-alive request and memory per idle connection](perf.svg)\n\n")
	r.baseSummary(&b)
	r.startedWithSummary(&b)
	r.tlsSummary(&b)
	r.h2Summary(&b)
	r.h2AbuseSummary(&b)
	r.wsSummary(&b)
	r.versus(&b)

	b.WriteString("## What the figures mean\n\n")
	for _, f := range res.Figures {
		if text, ok := meanings[f.ID]; ok {
			if f.ID == "download" || f.ID == "upload" {
				// Their SIZE is the run's; other texts may name SETTINGS_INITIAL_WINDOW_SIZE.
				text = strings.ReplaceAll(text, "SIZE", fmt.Sprintf("%d", m.XferBytes))
			}
			fmt.Fprintf(&b, "- **%s.** %s\n", f.Title, text)
		}
	}
	b.WriteString("\n**Behind a proxy.** With nginx or a load balancer in front, clients' connections end at the " +
		"proxy, which talks to the application over a few pooled keep-alive connections: the keep-alive " +
		"figures are the ones that apply, and idle-connection memory moves to the proxy. Serving clients " +
		"directly, or holding long polls, is where per-connection memory decides how many a machine can keep.\n\n")

	r.setup(&b)
	r.rerun(&b)

	b.WriteString("## Results by figure\n\n")
	for _, f := range res.Figures {
		r.figureTable(&b, f)
	}
	b.WriteString("## Raw data\n\n")
	b.WriteString("`perf.json` beside this file holds every sample by round, the summaries and the exact " +
		"commands, so a rerun can be compared figure by figure.\n")
	return b.String()
}

// hasSummary reports whether the run measured a figure of the summary table.
func (r *runner) hasSummary() bool {
	for _, row := range summaryRows {
		if r.res.figure(row.fig) != nil {
			return true
		}
	}
	return false
}

func (r *runner) summaryTable(b *strings.Builder) {
	servers := r.res.Servers
	fmt.Fprintf(b, "| figure | %s |\n|---|%s\n", strings.Join(servers, " | "), strings.Repeat("---|", len(servers)))
	for _, row := range summaryRows {
		f := r.res.figure(row.fig)
		if f == nil {
			continue
		}
		mt := f.metric(row.metric)
		cells := make([]string, len(servers))
		for i, s := range servers {
			cells[i] = cellBrief(f, mt, s)
		}
		fmt.Fprintf(b, "| %s | %s |\n", row.label, strings.Join(cells, " | "))
	}
}

// cellBrief is a summary cell: median and ratio, or why there is none.
func cellBrief(f *Figure, mt *Metric, srv string) string {
	if _, ok := f.Absent[srv]; ok {
		return "—"
	}
	sum, ok := mt.Summary[srv]
	if !ok {
		if len(f.Failed[srv]) > 0 {
			return "failed"
		}
		return "n/a"
	}
	s := fmtNum(sum.Median, mt.Digits)
	if q, ok := sum.ratio(baseline); ok && srv != baseline && !noRatio[mt.ID] {
		s += fmt.Sprintf(" (%.2f×)", q)
	}
	return s
}

func (r *runner) setup(b *strings.Builder) {
	m := r.res.Meta
	b.WriteString("## Setup\n\n")
	fmt.Fprintf(b, "- Machine: %d CPUs (%s), %s memory, Linux %s\n", m.CPUs, orNA(m.CPUModel), memSize(m.MemTotal), m.Kernel)
	fmt.Fprintf(b, "- Go: %s\n", m.GoVersion)
	for _, k := range sortedKeys(m.Versions) {
		fmt.Fprintf(b, "- %s: %s\n", k, m.Versions[k])
	}
	fmt.Fprintf(b, "- Method: every server runs alone, pinned to CPU %s with taskset (so the Go servers run with "+
		"GOMAXPROCS=1 and nginx with one worker); wrk and the load tool are pinned to CPU %s. A fresh server "+
		"is started for every measurement and stopped after it. wrk runs with -t%d -c%d (-c1 for the one-connection "+
		"figure) for %d s after a 1 s warm-up with the same load. Figures are measured one after the other; within a figure the servers take turns, round "+
		"after round, each round starting with the next server. Memory and CPU are read from /proc "+
		"(VmRSS, per-thread schedstat), summed over the server's process and its children. Transfers move "+
		"%s bytes (%s MiB); the memory figures hold up to %s connections.\n",
		serverCPU, loadCPU, wrkThreads, wrkConns, m.WrkSeconds, fmtNum(float64(m.XferBytes), 0), fmtNum(float64(m.XferBytes>>20), 0), fmtNum(float64(m.Conns), 0))
	b.WriteString("- Noise: the wrk tables include how busy CPU 0 was outside the server during each run " +
		"(from /proc/stat). Much above a few percent means another process shared the server's core and the " +
		"figures of that run are not to be trusted; rerun on a quiet machine. A run above 20 % is repeated once " +
		"(at most 10 times in a full run, 3 in a quick one) and the quieter result kept.\n")
	if len(r.res.WSServers) > 0 {
		fmt.Fprintf(b, "- WebSocket: the contenders run as the HTTP servers do, alone on CPU %s; the load tool's "+
			"ws-* modes, on CPU %s, open up to %s connections (upgrades over net, then one epoll loop over the raw "+
			"sockets). The echo figures measure %d s after a %s warm-up; broadcasts send %d messages. Their "+
			"tables give the noise too (the same retry applies) and the load tool's own CPU, which stays "+
			"under its core when the server, not the client, sets the pace.\n",
			serverCPU, loadCPU, fmtNum(float64(m.Conns), 0), m.WrkSeconds, r.wsWarm(), r.wsTicks())
	}
	r.tlsSetup(b)
	r.h2Setup(b)
	b.WriteString("\n")
}

func (r *runner) rerun(b *strings.Builder) {
	m := r.res.Meta
	b.WriteString("## How to rerun\n\n")
	b.WriteString("From the repository root, on a Debian machine with Go and at least 2 CPUs (the driver installs " +
		"wrk, nginx-light, and for the HTTP/2 figures nghttp2-client (h2load) and h2o, with apt-get when they are " +
		"missing):\n\n```sh\n")
	mk := r.makeCommand()
	switch m.Command {
	case "go run ./cmd/bench":
		fmt.Fprintf(b, "%s bench         # what produced this page\n", mk)
	case "go run ./cmd/bench -quick":
		fmt.Fprintf(b, "%s bench-quick   # what produced this page\n", mk)
	default:
		fmt.Fprintf(b, "%s bench         # the full run\n", mk)
	}
	fmt.Fprintf(b, "cd bench && %s   # exactly this run\n```\n\n", m.Command)
	b.WriteString("The driver builds each server with `go build -o $WORK/bin/NAME ./servers/NAME` and the load tool " +
		"with `go build -o $WORK/bin/load ./cmd/load`, where $WORK is a temporary directory; nginx is configured from " +
		"`bench/nginx/nginx.conf.tmpl` (and h2o, for the HTTP/2 figures, from `bench/h2o/h2o.conf.tmpl`). ")
	if m.Base != nil {
		b.WriteString(baseName + " is built from the base revision's tree, as the section against it says. ")
	}
	for _, name := range sortedKeys(startedWith) {
		if _, ok := m.Versions[name]; ok {
			st := startedWith[name]
			fmt.Fprintf(b, "%s has no binary of its own: it is %s's, started through `env %s`. ", name, st.of, strings.Join(st.env, " "))
		}
	}
	b.WriteString("Servers start as:\n\n```sh\n")
	for _, s := range r.res.Servers {
		if c, ok := r.serverCmds[s]; ok {
			b.WriteString(c + "\n")
		}
	}
	r.tlsServerCommands(b)
	r.h2ServerCommands(b)
	r.wsServerCommands(b)
	r.rlServerCommands(b)
	r.grpcServerCommands(b)
	b.WriteString("```\n\nEach figure then runs (first measurement shown; $PORT and $PID are the server's):\n\n")
	for _, f := range r.res.Figures {
		if len(f.Commands) == 0 {
			continue
		}
		fmt.Fprintf(b, "%s:\n\n```sh\n%s\n```\n\n", f.Title, strings.Join(f.Commands, "\n"))
	}
	b.WriteString("The wrk script `$WORK/report.lua` only prints wrk's summary as JSON (with p99.9):\n\n```lua\n" +
		wrkScript + "```\n\n")
	if r.res.figure("pipeline") != nil {
		b.WriteString("The pipelined figure's `$WORK/pipeline.lua` sends the requests in batches and ends with the " +
			"same summary:\n\n```lua\n" + strings.TrimSuffix(pipelineScript, wrkScript) + "-- then report.lua's done\n```\n\n")
	}
}

// makeCommand is "make" when the repository's Makefile has a bench target, else "make -C bench".
func (r *runner) makeCommand() string {
	b, err := os.ReadFile(filepath.Join(r.benchDir, "..", "Makefile"))
	if err == nil && strings.Contains("\n"+string(b), "\nbench:") {
		return "make"
	}
	return "make -C bench"
}

func (r *runner) figureTable(b *strings.Builder, f *Figure) {
	servers := f.columns(r.res.Servers)
	fmt.Fprintf(b, "### %s\n\n", f.Title)
	fmt.Fprintf(b, "| | %s |\n|---|%s\n", strings.Join(servers, " | "), strings.Repeat("---|", len(servers)))
	for _, mt := range f.Metrics {
		label := mt.Label
		if mt.Unit != "" {
			label += " (" + mt.Unit + ")"
		}
		cells := make([]string, len(servers))
		for i, s := range servers {
			cells[i] = cellFull(f, mt, s)
		}
		fmt.Fprintf(b, "| %s | %s |\n", label, strings.Join(cells, " | "))
		if noRatio[mt.ID] {
			continue
		}
		refs, name := ratioRows(f.ID, mt.ID), refName
		if len(f.Refs) > 0 {
			refs = f.Refs
		}
		if len(f.Peers) > 0 {
			refs, name = nil, func(ref string) string { return "best peer, " + ref }
			if mt.Best != "" {
				refs = []string{mt.Best}
			}
		}
		for _, ref := range refs {
			ratios := make([]string, len(servers))
			others := false
			for i, s := range servers {
				if q, ok := mt.Summary[s].ratio(ref); ok {
					ratios[i] = fmt.Sprintf("%.2f×", q)
					others = others || s != ref
				}
			}
			if others {
				fmt.Fprintf(b, "| … vs %s | %s |\n", name(ref), strings.Join(ratios, " | "))
			}
		}
	}
	b.WriteString("\n")
	for _, s := range sortedKeys(f.Absent) {
		fmt.Fprintf(b, "- %s: absent, %s.\n", s, f.Absent[s])
	}
	for _, s := range sortedKeys(f.Failed) {
		for _, msg := range f.Failed[s] {
			fmt.Fprintf(b, "- %s failed: %s\n", s, firstLine(msg))
		}
	}
	byNote := map[string][]string{}
	for _, s := range servers {
		if n, ok := f.Notes[s]; ok {
			byNote[n] = append(byNote[n], s)
		}
	}
	fellBack := 0
	for _, s := range servers {
		if fb := r.res.FellBack[s]; fb != nil && slices.Contains(fb.Figures, f.ID) {
			fmt.Fprintf(b, "- %s: measured without %s: the server logged `%s`.\n", s, strings.Join(startedWith[s].env, " "), fb.Line)
			fellBack++
		}
	}
	for _, n := range sortedKeys(byNote) {
		if strings.HasPrefix(f.ID, "tls-") {
			fmt.Fprintf(b, "- %s: the handshakes negotiated %s.\n", strings.Join(byNote[n], ", "), n)
			continue
		}
		if strings.HasPrefix(f.ID, "h2-") {
			text := n
			if strings.HasPrefix(n, "TLS") {
				text = "the load tool's connections negotiated " + n
			}
			fmt.Fprintf(b, "- %s: %s.\n", strings.Join(byNote[n], ", "), text)
			continue
		}
		fmt.Fprintf(b, "- %s: the server answered `Sec-WebSocket-Extensions: %s`.\n", strings.Join(byNote[n], ", "), n)
	}
	if len(f.Absent)+len(f.Failed)+len(f.Notes)+fellBack > 0 {
		b.WriteString("\n")
	}
}

// columns are the figure's servers: its own, or the run's.
func (f *Figure) columns(run []string) []string {
	if len(f.Servers) > 0 {
		return f.Servers
	}
	return run
}

// cellFull is a figure-table cell: median and range.
func cellFull(f *Figure, mt *Metric, srv string) string {
	if _, ok := f.Absent[srv]; ok {
		return "—"
	}
	sum, ok := mt.Summary[srv]
	if !ok {
		if len(f.Failed[srv]) > 0 {
			return "failed"
		}
		return "n/a"
	}
	if sum.N < 2 {
		return fmtNum(sum.Median, mt.Digits)
	}
	return fmt.Sprintf("%s (%s–%s)", fmtNum(sum.Median, mt.Digits), fmtNum(sum.Min, mt.Digits), fmtNum(sum.Max, mt.Digits))
}

// fmtNum formats v with digits decimals and thousands separators.
func fmtNum(v float64, digits int) string {
	s := fmt.Sprintf("%.*f", digits, v)
	if math.Abs(v) < 1000 {
		return s
	}
	intPart, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	var out []byte
	for i := range len(intPart) {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, intPart[i])
	}
	s = string(out)
	if neg {
		s = "-" + s
	}
	if frac != "" {
		s += "." + frac
	}
	return s
}

func (r *Results) figure(id string) *Figure {
	for _, f := range r.Figures {
		if f.ID == id {
			return f
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// rounds spells a round count.
func rounds(n int) string {
	if n == 1 {
		return "one round"
	}
	return fmt.Sprintf("%d rounds", n)
}

// memSize turns /proc/meminfo's "24683620 kB" into "23.5 GiB".
func memSize(s string) string {
	var kib float64
	if _, err := fmt.Sscanf(s, "%f kB", &kib); err != nil {
		return orNA(s)
	}
	return fmt.Sprintf("%.1f GiB", kib/(1<<20))
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
