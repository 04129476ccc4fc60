package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/proc"
)

// The HTTP/2 figures: dwell serving HTTP/2 on its loops (h2c with prior knowledge on plaintext,
// "h2" by ALPN over TLS, both its defaults) beside net/http (h2c through http.Protocols'
// UnencryptedHTTP2, which servers/nethttp turns on with -h2c; h2 over TLS by default), nginx
// (http2 on its listener, one worker) and h2o (one thread), each alone on CPU 0. The keep-alive
// figures are h2load's (nghttp2-client), on CPU 1; the memory figures the load tool's h2-idle
// and h2-park modes, a client of a few frames (cmd/load/h2.go). The TLS figures use the HTTPS
// figures' certificate and settings (tls.go): TLS 1.3, TLS_AES_128_GCM_SHA256, X25519. The
// figures have their own columns, and their ratios are to dwell.

// h2Contenders are the HTTP/2 figures' columns, in report order: dwell-uring, dwell's binary on
// io_uring (startedWith), right after dwell.
var h2Contenders = []string{"nethttp", "nginx", "h2o", "dwell", "dwell-uring"}

// h2Ref is the server the HTTP/2 figures' ratios are taken against.
const h2Ref = "dwell"

// h2oName is the h2o contender, configured from bench/h2o/h2o.conf.tmpl as nginx is from its own.
const h2oName = "h2o"

// The load: h2load's 50 connections with 10 streams in flight on each (-c50 -m10), or one
// stream on one connection; 5,000 streams parked as 100 on each of 50 connections.
const (
	h2Conns       = 50
	h2Streams     = 10
	h2ParkConns   = 50
	h2ParkStreams = 100
)

var h2loadMetrics = []Metric{
	{ID: "cpu_us", Label: "server CPU per request", Unit: "µs", Digits: 2},
	{ID: "rps", Label: "requests per second", Unit: "req/s"},
	{ID: "mean_us", Label: "time for request, mean (h2load)", Unit: "µs"},
	{ID: "max_us", Label: "time for request, max (h2load)", Unit: "µs"},
	{ID: "errors", Label: "failed requests (h2load: failed, timed out)", Unit: ""},
	{ID: "other_pct", Label: "CPU 0 busy outside the server (noise)", Unit: "%", Digits: 1},
}

var h2IdleMetrics = []Metric{
	{ID: "kib", Label: "RSS per idle HTTP/2 connection", Unit: "KiB", Digits: 2},
	{ID: "base_mib", Label: "RSS with 1,000 idle connections", Unit: "MiB", Digits: 1},
}

var h2Specs = []*figureSpec{
	{id: "h2-hello", title: fmt.Sprintf("HTTP/2: hello, h2c, %d connections × %d streams", h2Conns, h2Streams),
		h2: true, metrics: h2loadMetrics, measure: h2loadFigure(h2Conns, h2Streams)},
	{id: "h2-hello-tls", title: fmt.Sprintf("HTTP/2: hello over TLS (h2), %d connections × %d streams", h2Conns, h2Streams),
		h2: true, tls: tlsX25519, metrics: h2loadMetrics, measure: h2loadFigure(h2Conns, h2Streams)},
	{id: "h2-one", title: "HTTP/2: hello, h2c, one connection, one stream",
		h2: true, metrics: h2loadMetrics, measure: h2loadFigure(1, 1)},
	{id: "h2-idle", title: "HTTP/2: memory per idle connection, h2c", h2: true, metrics: h2IdleMetrics,
		measure: holdFigure("h2-idle", "/hello")},
	{id: "h2-idle-tls", title: "HTTP/2: memory per idle connection over TLS (h2)", h2: true, tls: tlsX25519,
		metrics: h2IdleMetrics, measure: holdFigure("h2-idle", "/hello")},
	{id: "h2-park", title: fmt.Sprintf("HTTP/2: memory per parked stream, %d on each of %d connections, h2c", h2ParkStreams, h2ParkConns),
		h2: true, metrics: []Metric{
			{ID: "kib", Label: "RSS per parked stream", Unit: "KiB", Digits: 2},
			{ID: "base_mib", Label: fmt.Sprintf("RSS with 1,000 parked streams (%d per connection)", 1000/h2ParkConns), Unit: "MiB", Digits: 1},
			{ID: "release_ms", Label: fmt.Sprintf("time to answer all %s after one release", fmtNum(h2ParkConns*h2ParkStreams, 0)), Unit: "ms", Digits: 1},
		}, measure: h2ParkFigure},
}

func init() {
	specs = append(specs, h2Specs...)
	// The slowest request of a run is one moment of the machine's, not the server's cost.
	noRatio["max_us"] = true
}

// h2FigureIDs are the HTTP/2 figures' ids, in order.
func h2FigureIDs() []string {
	ids := make([]string, len(h2Specs))
	for i, s := range h2Specs {
		ids[i] = s.id
	}
	return ids
}

// hasH2 reports whether any figure asked for is an HTTP/2 one; hasH2TLS whether one of them
// runs over TLS (and needs the run's certificate).
func hasH2(figs []string) bool {
	return slices.ContainsFunc(figs, func(f string) bool { return slices.Contains(h2FigureIDs(), f) })
}

func hasH2TLS(figs []string) bool {
	return slices.ContainsFunc(figs, func(f string) bool { s := specFor(f); return s != nil && s.h2 && s.tls != "" })
}

// h2loadFigures are the figures h2load measures: they sit out, with the reason, when it is
// missing.
var h2loadFigures = []string{"h2-hello", "h2-hello-tls", "h2-one"}

// h2Wanted expands the -h2 flag.
func h2Wanted(list string) ([]string, error) {
	if list == "none" {
		return nil, nil
	}
	names := splitList(list)
	for _, n := range names {
		if !slices.Contains(h2Contenders, n) {
			return nil, fmt.Errorf("unknown HTTP/2 contender %q (known: %s)", n, strings.Join(h2Contenders, ","))
		}
	}
	slices.SortFunc(names, byOrder(h2Contenders))
	return names, nil
}

// buildH2 builds or finds the HTTP/2 contenders asked for, each a server that lacks every figure
// but the HTTP/2 ones it takes part in. One that cannot be had is skipped with the reason.
func (r *runner) buildH2(ctx context.Context, names []string) []*server {
	if p, ok := r.tools["h2load"]; ok {
		out, _ := exec.Command(p, "--version").CombinedOutput()
		r.meta.Versions["h2load"] = strings.TrimSpace(string(out))
	}
	var out []*server
	built := map[string]bool{} // binaries built, by path: a startedWith server runs another's
	for _, name := range names {
		s := &server{name: name, h2: true, lacks: map[string]string{"allocs": "not an HTTP/2 figure"}}
		switch name {
		case "nginx", h2oName:
			path, ok := r.tools[name]
			if !ok {
				r.skip(name+" (HTTP/2)", fmt.Sprintf("%s is not installed", name))
				continue
			}
			s.bin = path
			v, _ := exec.Command(path, "-v").CombinedOutput()
			if name == h2oName {
				v, _ = exec.Command(path, "--version").CombinedOutput()
			}
			line, _, _ := strings.Cut(strings.TrimSpace(string(v)), "\n")
			s.version = strings.TrimPrefix(strings.TrimPrefix(line, "nginx version: "), "h2o version ")
			if name == h2oName {
				s.version = "h2o " + s.version
			}
			s.lacks["h2-park"] = name + " has no long poll of its own"
		case baseName:
			s.bin, s.version = r.base.bin, r.base.version() // built by buildBase
		default:
			pkg, tags := serverPackage(name)
			s.bin = filepath.Join(r.work, "bin", binName(name))
			if !built[s.bin] {
				if err := r.goBuild(ctx, s.bin, "./servers/"+pkg, tags); err != nil {
					r.skip(name+" (HTTP/2)", fmt.Sprintf("does not build: %v", err))
					continue
				}
				built[s.bin] = true
			}
			s.version = startedWithVersion(name, r.goServerVersion(name, s.bin))
			if name == baseline {
				s.h2cArgs = []string{"-h2c"} // dwell serves h2c by default
			}
		}
		for _, id := range figureIDs() {
			if !slices.Contains(h2FigureIDs(), id) {
				s.lacks[id] = "not an HTTP/2 figure"
			}
		}
		if _, ok := r.tools["h2load"]; !ok {
			for _, id := range h2loadFigures {
				s.lacks[id] = "h2load is missing (apt-get install nghttp2-client)"
			}
		}
		out = append(out, s)
	}
	return out
}

// nginxHTTP2On reports whether an nginx version ("nginx/1.22.1") has the `http2 on`
// directive (1.25.1 and later); before it HTTP/2 is a parameter of `listen`, and a plaintext
// listener with it speaks h2c with prior knowledge alone.
func nginxHTTP2On(version string) bool {
	v := strings.TrimPrefix(version, "nginx/")
	var major, minor, patch int
	if n, _ := fmt.Sscanf(v, "%d.%d.%d", &major, &minor, &patch); n < 2 {
		return false
	}
	return major > 1 || major == 1 && (minor > 25 || minor == 25 && patch >= 1)
}

// h2oConf renders bench/h2o/h2o.conf.tmpl for one port into $WORK/h2o, with the file it
// answers /hello from, the 254-byte file the other servers serve at /file (the tiny-window
// abuse figure's) and, for TLS, the OpenSSL configuration its argv names.
func (r *runner) h2oConf(port int, secure bool) error {
	prefix := filepath.Join(r.work, "h2o")
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return err
	}
	hello := filepath.Join(prefix, "hello.txt")
	if err := os.WriteFile(hello, []byte("Hello World"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(prefix, "openssl.cnf"), []byte(h2oOpenSSL), 0o644); err != nil {
		return err
	}
	tmpl, err := template.ParseFiles(filepath.Join(r.benchDir, "h2o", "h2o.conf.tmpl"))
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(prefix, fmt.Sprintf("h2o-%d.conf", port)))
	if err != nil {
		return err
	}
	defer f.Close()
	data := map[string]any{"Prefix": prefix, "Port": port, "Hello": hello, "File": r.file, "User": "",
		"Conns": r.cfg.conns + r.cfg.conns/4 + 1024, "TLS": secure, "Cert": r.cert, "Key": r.key}
	if os.Geteuid() == 0 {
		data["User"] = "root" // as for nginx: the work directory is private
	}
	return tmpl.Execute(f, data)
}

// h2oOpenSSL is the OpenSSL configuration h2o runs with over TLS (OPENSSL_CONF). h2o 2.2 has no
// setting for TLS 1.3's cipher suites or for the key exchange: OpenSSL's system defaults are
// where they are set, to what nginx is given with ssl_conf_command and ssl_ecdh_curve.
const h2oOpenSSL = `# Written by bench/cmd/bench for h2o: TLS 1.3 with TLS_AES_128_GCM_SHA256 and X25519, as the others.
openssl_conf = openssl_init

[openssl_init]
ssl_conf = ssl_sect

[ssl_sect]
system_default = system_default_sect

[system_default_sect]
MinProtocol = TLSv1.2
Ciphersuites = TLS_AES_128_GCM_SHA256
Groups = X25519
`

// h2oArgv is h2o's command: its configuration for the port, and over TLS the OpenSSL
// configuration above (through env, which execs h2o in its place, so the pid is h2o's).
func (r *runner) h2oArgv(pin []string, s *server, port int, tlsMode string) []string {
	prefix := filepath.Join(r.work, "h2o")
	argv := pin
	if tlsMode != "" {
		argv = append(argv, "env", "OPENSSL_CONF="+filepath.Join(prefix, "openssl.cnf"))
	}
	return append(argv, s.bin, "-c", filepath.Join(prefix, fmt.Sprintf("h2o-%d.conf", port)))
}

// h2loadSummary is what the driver reads of h2load's output.
type h2loadSummary struct {
	seconds                            float64
	done, succeeded, failed, timeout   int64
	meanUs, maxUs                      float64
	protocol, tlsVersion, cipher, temp string
}

// parseH2load reads h2load's text output: "finished in", the requests line, "time for
// request" (min, max, mean, ...), and the connection's protocol and TLS parameters.
func parseH2load(out string) (h2loadSummary, error) {
	var s h2loadSummary
	var haveReq, haveTime bool
	for line := range strings.SplitSeq(out, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "finished in "):
			d, _, _ := strings.Cut(strings.TrimPrefix(line, "finished in "), ",")
			us, err := h2loadDuration(d)
			if err != nil {
				return s, err
			}
			s.seconds = us / 1e6
		case strings.HasPrefix(line, "requests: "):
			for part := range strings.SplitSeq(strings.TrimPrefix(line, "requests: "), ",") {
				var n int64
				var what string
				if _, err := fmt.Sscanf(strings.TrimSpace(part), "%d %s", &n, &what); err != nil {
					return s, fmt.Errorf("h2load requests line %q: %w", line, err)
				}
				switch what {
				case "done":
					s.done = n
				case "succeeded":
					s.succeeded = n
				case "failed":
					s.failed = n
				case "timeout":
					s.timeout = n
				}
			}
			haveReq = true
		case strings.HasPrefix(line, "time for request:"):
			f := strings.Fields(strings.TrimPrefix(line, "time for request:"))
			if len(f) < 3 {
				return s, fmt.Errorf("h2load line %q", line)
			}
			var err1, err2 error
			s.maxUs, err1 = h2loadDuration(f[1])
			s.meanUs, err2 = h2loadDuration(f[2])
			if err1 != nil || err2 != nil {
				return s, fmt.Errorf("h2load line %q", line)
			}
			haveTime = true
		case strings.HasPrefix(line, "Application protocol:"):
			s.protocol = strings.TrimSpace(strings.TrimPrefix(line, "Application protocol:"))
		case strings.HasPrefix(line, "TLS Protocol:"):
			s.tlsVersion = strings.TrimSpace(strings.TrimPrefix(line, "TLS Protocol:"))
		case strings.HasPrefix(line, "Cipher:"):
			s.cipher = strings.TrimSpace(strings.TrimPrefix(line, "Cipher:"))
		case strings.HasPrefix(line, "Server Temp Key:"):
			f := strings.Fields(strings.TrimPrefix(line, "Server Temp Key:"))
			if len(f) > 0 {
				s.temp = f[0]
			}
		}
	}
	if !haveReq || !haveTime || s.seconds == 0 {
		return s, fmt.Errorf("h2load printed no summary")
	}
	return s, nil
}

// h2loadDuration parses h2load's durations ("717us", "22.01ms", "2.08s") into microseconds.
func h2loadDuration(s string) (float64, error) {
	for _, u := range []struct {
		suffix string
		us     float64
	}{{"us", 1}, {"ms", 1e3}, {"s", 1e6}} {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			return v * u.us, err
		}
	}
	return 0, fmt.Errorf("h2load duration %q", s)
}

// h2loadArgv is the pinned h2load command: one thread, conns connections with streams requests
// in flight on each, for secs seconds.
func (r *runner) h2loadArgv(url string, secs, conns, streams int) []string {
	return []string{r.tools["taskset"], "-c", loadCPU, r.tools["h2load"], "-t1",
		fmt.Sprintf("-c%d", conns), fmt.Sprintf("-m%d", streams), "-D", strconv.Itoa(secs), url}
}

// runH2load runs h2load and parses what it printed. A server that hangs cannot hold it past
// its duration and a margin. h2load has been seen, once in a while, to stop its clients at the
// end of the duration and then wait for ever without printing its summary (nginx over TLS,
// where hundreds of runs before and after went through): such a run is started again, once,
// and the log says so.
func (r *runner) runH2load(ctx context.Context, argv []string, secs int) (h2loadSummary, error) {
	var out, errb bytes.Buffer
	for attempt := 1; ; attempt++ {
		out.Reset()
		errb.Reset()
		runCtx, cancel := context.WithTimeout(ctx, time.Duration(secs+15)*time.Second)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := r.procs.run(runCtx, cmd)
		cancel()
		if err == nil {
			break
		}
		if attempt == 1 && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			r.logf("h2load did not end within %d s of its duration; running it again: %s", 15, tail2(out.String()))
			continue
		}
		return h2loadSummary{}, fmt.Errorf("h2load: %w: %s", err, strings.TrimSpace(errb.String()+"\n"+tail2(out.String())))
	}
	s, err := parseH2load(out.String())
	if err != nil {
		return s, fmt.Errorf("%w: %s", err, tail2(out.String()+errb.String()))
	}
	// Anything but HTTP/2 would measure another protocol: h2c is what h2load names prior
	// knowledge, h2 what ALPN chose over TLS.
	if s.protocol != "h2c" && s.protocol != "h2" {
		return s, fmt.Errorf("h2load spoke %q, not HTTP/2", s.protocol)
	}
	return s, nil
}

// tail2 is the end of a command's output, for an error.
func tail2(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-4):], " | ")
}

// h2loadFigure warms the server up for a second, then runs h2load for wrk's duration and reads
// the server's CPU time before and after, as wrkFigure does; a noisy run is measured again
// (quieter).
func h2loadFigure(conns, streams int) func(context.Context, *runner, *measurement) (map[string]float64, error) {
	return func(ctx context.Context, r *runner, m *measurement) (map[string]float64, error) {
		url := m.rs.scheme() + "://" + m.rs.addr + "/hello"
		warm := r.h2loadArgv(url, 1, conns, streams)
		if _, err := r.runH2load(ctx, warm, 1); err != nil {
			return nil, err
		}
		argv := r.h2loadArgv(url, r.cfg.wrkSecs, conns, streams)
		m.cmds = append(m.cmds, warm, argv)
		return r.quieter(m, func() (map[string]float64, error) {
			before, err := proc.CPU(m.rs.pid)
			if err != nil {
				return nil, err
			}
			busyBefore, _ := proc.CPUBusy(serverCPUIndex)
			t0 := time.Now()
			s, err := r.runH2load(ctx, argv, r.cfg.wrkSecs)
			if err != nil {
				return nil, err
			}
			after, err := proc.CPU(m.rs.pid)
			if err != nil {
				return nil, err
			}
			busyAfter, _ := proc.CPUBusy(serverCPUIndex)
			if s.succeeded == 0 {
				return nil, fmt.Errorf("h2load completed no request (%d done, %d failed)", s.done, s.failed)
			}
			if s.tlsVersion != "" {
				m.note = fmt.Sprintf("h2load's connections negotiated %s, %s, %s, %s", s.tlsVersion, s.cipher, s.temp, s.protocol)
			}
			other := float64(busyAfter-busyBefore-(after-before)) / float64(time.Since(t0)) * 100
			return map[string]float64{
				"rps":       float64(s.done) / s.seconds,
				"cpu_us":    float64(after-before) / 1e3 / float64(s.done),
				"mean_us":   s.meanUs,
				"max_us":    s.maxUs,
				"errors":    float64(s.failed + s.timeout),
				"other_pct": max(other, 0),
			}, nil
		})
	}
}

// h2ParkFigure has the load tool open the connections, park 1,000 streams then 5,000 on them
// (the connections open at both readings, so the growth is the streams'), release them with
// one POST /release and time the last answer.
func h2ParkFigure(ctx context.Context, r *runner, m *measurement) (map[string]float64, error) {
	var res struct {
		BytesPerStream float64 `json:"bytes_per_stream"`
		Checkpoints    []struct {
			RSS int64 `json:"rss_bytes"`
		} `json:"checkpoints"`
		ReleaseMS  float64 `json:"release_ms"`
		MaxStreams uint32  `json:"max_streams"`
	}
	args := []string{"h2-park", "-addr", m.rs.addr, "-pid", strconv.Itoa(m.rs.pid), "-path", "/poll",
		"-conns", strconv.Itoa(h2ParkConns), "-streams", strconv.Itoa(h2ParkStreams),
		"-at", fmt.Sprintf("1000,%d", h2ParkConns*h2ParkStreams), "-release"}
	if err := r.runLoad(ctx, m, &res, args...); err != nil {
		return nil, err
	}
	if len(res.Checkpoints) == 0 {
		return nil, fmt.Errorf("no checkpoint")
	}
	if res.MaxStreams > 0 {
		m.note = fmt.Sprintf("announced SETTINGS_MAX_CONCURRENT_STREAMS %d", res.MaxStreams)
	}
	return map[string]float64{
		"kib":        res.BytesPerStream / 1024,
		"base_mib":   float64(res.Checkpoints[0].RSS) / (1 << 20),
		"release_ms": res.ReleaseMS,
	}, nil
}

// h2ServerCommands writes, for the report, how the HTTP/2 contenders start.
func (r *runner) h2ServerCommands(b *strings.Builder) {
	for _, p := range []struct{ key, comment string }{
		{"h2:", "# the HTTP/2 figures, h2c"}, {"tls-" + tlsX25519 + ":h2:", "# the HTTP/2 figures over TLS"},
		{"wt:tls-" + tlsX25519 + ":h2:", "# the zero-window abuse figure: over TLS, with a write timeout (h2abuse.go)"}} {
		said := false
		for _, s := range withBase(h2Contenders) {
			if c, ok := r.serverCmds[p.key+s]; ok {
				if !said {
					b.WriteString(p.comment + "\n")
					said = true
				}
				b.WriteString(c + "\n")
			}
		}
	}
}
