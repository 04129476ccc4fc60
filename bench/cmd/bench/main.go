// Command bench is the driver behind `make bench`: it builds the dwell server (also measured as
// dwell-uring, started with DWELL_POLLER=io_uring: servers.go, startedWith), its peers
// (net/http, fasthttp, nbio), the gnet floor and its io_uring twin uring-floor, and configures nginx, builds the WebSocket
// contenders (dwell's package websocket, gorilla, coder, gws, nbio and the ws-floor loop: see
// ws.go), runs the HTTPS figures of dwell, nginx and net/http (tls.go), measures each figure for
// every server in turn, round after round, with the server alone on CPU 0 and the load generator
// on CPU 1, and writes docs/performance.md, docs/perf.svg and docs/perf.json from what it
// measured.
//
// Usage, from bench/:
//
//	go run ./cmd/bench            # full run: 3 rounds, wrk -d4s, 512 MiB transfers (< 10 min)
//	go run ./cmd/bench -quick     # 1 round, wrk -d1s, 64 MiB transfers (< 2 min)
//	go run ./cmd/bench -quick -servers nethttp,fasthttp -figures hello,idle -out /tmp/perf
//	go run ./cmd/bench -quick -figures ws -out /tmp/perf   # the WebSocket figures alone
//	go run ./cmd/bench -figures tls,idle,park -out /tmp/perf # the HTTPS figures, plaintext memory beside
//	go run ./cmd/bench -figures h2 -out /tmp/perf  # the HTTP/2 figures (h2.go): h2load, h2o, nginx, net/http
//	go run ./cmd/bench -figures h2abuse -out /tmp/perf  # the HTTP/2 abuse figures alone (h2abuse.go)
//	go run ./cmd/bench -figures grpc -out /tmp/perf  # the gRPC figure (grpc.go): grpc-go, behind net/http, dwell
//	go run ./cmd/bench -figures h2 -h2 dwell -base HEAD -out /tmp/perf  # dwell against its last commit (base.go)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/bench/internal/proc"
)

// The server runs alone on one CPU and every load generator on the other, so the figures are
// per core and the client does not steal the server's cycles.
const (
	serverCPU      = "0"
	serverCPUIndex = 0
	loadCPU        = "1"
)

// config is the driver's command line.
type config struct {
	quick    bool
	servers  []string
	ws       []string
	h2       []string
	figures  []string
	rounds   int
	wrkSecs  int
	xferSize int64
	starts   int
	conns    int
	out      string
	allocs   string
	keep     bool
	// base is the git revision dwell is measured against (-base, base.go), "" for none.
	base string
}

// parseFlags parses the command line into the driver's flags, which fillMeta reads back.
func parseFlags() (config, error) {
	return parseArgs(flag.CommandLine, os.Args[1:])
}

// parseArgs parses args with the flags defined on fs.
func parseArgs(fs *flag.FlagSet, args []string) (config, error) {
	var c config
	var servers, figs, ws, h2 string
	var rounds int
	fs.BoolVar(&c.quick, "quick", false, "one short round of everything, for development (< 2 min)")
	fs.StringVar(&servers, "servers", strings.Join(serverNames, ","), "servers to measure")
	fs.StringVar(&ws, "ws", strings.Join(wsContenderNames(), ","), "WebSocket contenders to measure, or none")
	fs.StringVar(&h2, "h2", strings.Join(h2Contenders, ","), "HTTP/2 contenders to measure, or none")
	fs.StringVar(&figs, "figures", strings.Join(figureIDs(), ","), "figures to measure (http, tls, h2 and ws stand for all the plaintext HTTP/1.1, HTTPS, HTTP/2 or WebSocket ones, h2abuse for the HTTP/2 abuse ones)")
	fs.IntVar(&rounds, "rounds", 0, "rounds (0: 3, or 1 with -quick)")
	fs.StringVar(&c.out, "out", "", "directory for performance.md, perf.svg and perf.json (default ../docs)")
	fs.StringVar(&c.allocs, "allocs", "", "`file` of go test -bench -benchmem output, sub-benchmarks named after servers, for the allocations row")
	fs.BoolVar(&c.keep, "keep", false, "keep the work directory (binaries, configs, server logs)")
	fs.StringVar(&c.base, "base", "", "git `revision` of the repository to measure dwell against, built as the contender "+baseName+
		" and measured in every HTTP/1.1, HTTPS and HTTP/2 figure dwell is in (e.g. HEAD)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.servers = splitList(servers)
	c.figures = expandFigures(splitList(figs))
	var err error
	if c.ws, err = wsWanted(ws); err != nil {
		return c, err
	}
	if c.h2, err = h2Wanted(h2); err != nil {
		return c, err
	}
	for _, s := range c.servers {
		if !slices.Contains(serverNames, s) {
			return c, fmt.Errorf("unknown server %q (known: %s)", s, strings.Join(serverNames, ","))
		}
	}
	for _, f := range c.figures {
		if specFor(f) == nil {
			return c, fmt.Errorf("unknown figure %q (known: %s)", f, strings.Join(figureIDs(), ","))
		}
	}
	if !slices.Contains(c.servers, baseline) {
		// Every ratio is to net/http; without it a table would have nothing to compare with.
		c.servers = append(c.servers, baseline)
	}
	// Reports keep one column order whatever order the flag gave.
	slices.SortFunc(c.servers, byOrder(serverNames))
	if c.base != "" {
		if err := c.addBase(); err != nil {
			return c, err
		}
	}
	c.rounds, c.wrkSecs, c.xferSize, c.starts, c.conns = 3, 4, 512<<20, 5, 5000
	if c.quick {
		c.rounds, c.wrkSecs, c.xferSize, c.starts = 1, 1, 64<<20, 3
	}
	if rounds > 0 {
		c.rounds = rounds
	}
	return c, nil
}

// expandFigures replaces the group names http, tls, h2, h2abuse, grpc and ws by their figures (http:
// the plaintext HTTP/1.1 ones; h2 holds the h2abuse ones).
func expandFigures(figs []string) []string {
	var out []string
	for _, f := range figs {
		var group []string
		switch f {
		case "ws":
			group = wsFigureIDs()
		case "tls":
			group = tlsFigureIDs()
		case "h2":
			group = h2FigureIDs()
		case "h2abuse":
			group = h2AbuseFigureIDs()
		case "grpc":
			group = grpcFigureIDs()
		case "http":
			group = slices.DeleteFunc(figureIDs(), func(id string) bool {
				return slices.Contains(wsFigureIDs(), id) || slices.Contains(tlsFigureIDs(), id) || slices.Contains(h2FigureIDs(), id) ||
					slices.Contains(grpcFigureIDs(), id)
			})
		default:
			group = []string{f}
		}
		for _, g := range group {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	return out
}

func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func main() {
	cfg, err := parseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	r := &runner{cfg: cfg, procs: newProcs(), start: time.Now(), retries: 10}
	if cfg.quick {
		r.retries = 3
	}
	err = r.run(ctx)
	stop()
	r.procs.stopAll()
	if r.work != "" {
		if cfg.keep {
			r.logf("kept %s", r.work)
		} else {
			os.RemoveAll(r.work)
		}
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "bench: interrupted; every process it started has been stopped")
		} else {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		os.Exit(1)
	}
}

// runner holds one run's state.
type runner struct {
	cfg      config
	procs    *procs
	start    time.Time
	benchDir string
	out      string
	work     string
	tools    map[string]string
	load     string
	file     string
	fsDir    string // the fs figure's file for nginx, a copy of peer.Assets on disk
	download string
	// cert and key are the HTTPS figures' certificate and key (tls.go), when they run.
	cert, key string
	lua       string
	// pipelineLua is the pipeline figure's wrk script.
	pipelineLua string
	meta        Meta
	res         Results
	// serverCmds is each server's start command as the report shows it.
	serverCmds map[string]string
	// retries is how many noisy wrk runs may still be repeated; the cap keeps a busy machine
	// from pushing a run past its time budget.
	retries int
	// writeTimeout is the write timeout of the figure being measured (figureSpec.writeTimeout),
	// which argv and nginxConf give the servers they start; zero for their defaults.
	writeTimeout time.Duration
	// base is the -base revision and dwell-base's binary (base.go), nil without -base.
	base *baseTree
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench %5.1fs: %s\n", time.Since(r.start).Seconds(), fmt.Sprintf(format, args...))
}

func (r *runner) skip(name, why string) {
	if r.res.Skipped == nil {
		r.res.Skipped = map[string]string{}
	}
	// The report gets one line (a build error's last, which names the file and the problem);
	// the log gets everything.
	lines := strings.Split(strings.TrimSpace(why), "\n")
	short := lines[0]
	if len(lines) > 1 {
		short += ": " + strings.TrimSpace(lines[len(lines)-1])
	}
	r.res.Skipped[name] = short
	r.logf("skipping %s: %s", name, why)
}

func (r *runner) run(ctx context.Context) error {
	var err error
	if r.benchDir, err = findBenchDir(); err != nil {
		return err
	}
	r.out = r.cfg.out
	if r.out == "" {
		r.out = filepath.Join(r.benchDir, "..", "docs")
	}
	if n, err := proc.RaiseNofile(1 << 16); err != nil || n < uint64(r.cfg.conns)+1024 {
		r.logf("RLIMIT_NOFILE is %d (%v): the memory figures need %d connections", n, err, r.cfg.conns)
	}
	if r.tools, err = ensureTools(ctx, r.procs, r.logf); err != nil {
		return err
	}
	machine(&r.meta, r.tools)
	clearStartedWithEnv(r.logf)
	if r.meta.CPUs < 2 {
		return fmt.Errorf("the driver needs 2 CPUs (server on CPU %s, load on CPU %s); this machine has %d", serverCPU, loadCPU, r.meta.CPUs)
	}
	if r.work, err = os.MkdirTemp("", "dwell-bench-"); err != nil {
		return err
	}
	if err := r.prepareFiles(); err != nil {
		return err
	}
	if hasTLS(r.cfg.figures) || hasH2TLS(r.cfg.figures) {
		if err := r.prepareCert(); err != nil {
			return err
		}
	}
	if r.cfg.base != "" {
		// Built first: a base that cannot be had ends the run before anything is measured.
		if err := r.buildBase(ctx); err != nil {
			return fmt.Errorf("-base %s: %w", r.cfg.base, err)
		}
	}
	r.logf("building servers into %s", r.work)
	names := r.cfg.servers
	if !hasHTTP(r.cfg.figures) && r.cfg.allocs == "" {
		names = nil // the load tool alone
	}
	servers, err := r.buildServers(ctx, names)
	if err != nil {
		return err
	}
	var wsServers, rlServers, h2Servers, grpcServers []*server
	if hasWS(r.cfg.figures) {
		wsServers = r.buildWS(ctx, r.cfg.ws)
	}
	if hasH2(r.cfg.figures) {
		h2Servers = r.buildH2(ctx, r.cfg.h2)
	}
	if hasRL(r.cfg.figures) {
		rlServers = r.buildRL(ctx)
	}
	if hasGRPC(r.cfg.figures) {
		grpcServers = r.buildGRPC(ctx)
	}
	servers = slices.DeleteFunc(servers, func(s *server) bool {
		if r.takesPart(s) {
			return false
		}
		r.logf("leaving %s out: it takes part in none of the figures asked for", s.name)
		return true
	})
	r.meta.Versions = mergeVersions(mergeVersions(mergeVersions(mergeVersions(mergeVersions(r.meta.Versions, servers), wsServers), rlServers), h2Servers), grpcServers)
	r.fillMeta()
	for _, s := range servers {
		r.res.Servers = append(r.res.Servers, s.name)
	}
	for _, s := range wsServers {
		r.res.WSServers = append(r.res.WSServers, s.name)
	}
	r.logf("servers: %s; WebSocket: %s; figures: %s; %d round(s)", strings.Join(r.res.Servers, ","),
		strings.Join(r.res.WSServers, ","), strings.Join(r.cfg.figures, ","), r.cfg.rounds)
	for _, id := range r.cfg.figures {
		spec, run := specFor(id), servers
		if spec.ws {
			run = wsServers
		}
		if spec.rl {
			run = rlServers
		}
		if spec.grpc {
			run = grpcServers
		}
		if spec.tls != "" {
			run = slices.DeleteFunc(slices.Clone(servers), func(s *server) bool { return !isTLSContender(s.name) })
		}
		if spec.h2 {
			run = h2Servers
		}
		if err := r.runFigure(ctx, spec, run); err != nil {
			return err
		}
	}
	if hasRL(r.cfg.figures) {
		r.rlAllocs(ctx)
	}
	if r.cfg.allocs != "" || slices.Contains(r.cfg.figures, "hello") {
		path := r.cfg.allocs
		if path == "" {
			path = r.runAllocs(ctx)
		}
		f := allocsFigure(path, r.res.Servers, r.logf)
		for _, s := range servers {
			if why, ok := s.lacks["allocs"]; ok {
				if f.Absent == nil {
					f.Absent = map[string]string{}
				}
				f.Absent[s.name] = why
			}
		}
		r.res.Figures = append(r.res.Figures, f)
	}
	r.meta.Seconds = time.Since(r.start).Seconds()
	r.res.Meta = r.meta
	r.res.summarize()
	return r.writeReport()
}

// takesPart reports whether s takes part in any figure of the run.
func (r *runner) takesPart(s *server) bool {
	figs := r.cfg.figures
	if r.cfg.allocs != "" || slices.Contains(figs, "hello") {
		figs = append(slices.Clone(figs), "allocs")
	}
	for _, id := range figs {
		if _, lacks := s.lacks[id]; !lacks {
			return true
		}
	}
	return false
}

// findBenchDir walks up from the working directory to the bench module's root.
func findBenchDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/dwellhttp/dwell/bench\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("run the driver inside bench/ (no bench go.mod above %s)", dir)
		}
	}
}

// prepareFiles writes the 254-byte file served at /file, the wrk scripts and, for nginx, the
// sparse file served at /download.
func (r *runner) prepareFiles() error {
	r.file = filepath.Join(r.work, "file254.txt")
	line := "dwell benchmark file: 254 bytes of text, small enough to fit one packet with its headers.\n"
	body := strings.Repeat(line, 3)[:253] + "\n"
	if err := os.WriteFile(r.file, []byte(body), 0o644); err != nil {
		return err
	}
	r.fsDir = filepath.Join(r.work, "fs")
	asset, err := peer.Assets.ReadFile(strings.TrimPrefix(peer.AssetPath, "/fs/"))
	if err != nil {
		return err
	}
	assetFile := filepath.Join(r.fsDir, strings.TrimPrefix(peer.AssetPath, "/fs/"))
	if err := os.MkdirAll(filepath.Dir(assetFile), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(assetFile, asset, 0o644); err != nil {
		return err
	}
	r.lua = filepath.Join(r.work, "report.lua")
	if err := os.WriteFile(r.lua, []byte(wrkScript), 0o644); err != nil {
		return err
	}
	r.pipelineLua = filepath.Join(r.work, "pipeline.lua")
	if err := os.WriteFile(r.pipelineLua, []byte(pipelineScript), 0o644); err != nil {
		return err
	}
	r.download = filepath.Join(r.work, "download.bin")
	f, err := os.Create(r.download)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(r.cfg.xferSize); err != nil {
		return err
	}
	// Reading the holes once puts the file in the page cache, so nginx's first download is not
	// also the page cache's first fill; the Go servers send from memory.
	_, err = io.Copy(io.Discard, f)
	return err
}

func mergeVersions(v map[string]string, servers []*server) map[string]string {
	if v == nil {
		v = map[string]string{}
	}
	for _, s := range servers {
		if s.version != "" {
			v[s.name] = s.version
		}
	}
	return v
}

func (r *runner) fillMeta() {
	r.meta.Date = time.Now().UTC().Format("2006-01-02 15:04 UTC")
	r.meta.Quick = r.cfg.quick
	r.meta.Rounds = r.cfg.rounds
	r.meta.WrkSeconds = r.cfg.wrkSecs
	r.meta.XferBytes = r.cfg.xferSize
	r.meta.Conns = r.cfg.conns
	r.meta.Command = "go run ./cmd/bench"
	flag.Visit(func(f *flag.Flag) {
		switch {
		case f.Name == "out":
			// Where the report went is not part of what it measured.
		case f.Value.String() == "true":
			r.meta.Command += " -" + f.Name
		default:
			r.meta.Command += " -" + f.Name + " " + shellQuote(f.Value.String())
		}
	})
}
