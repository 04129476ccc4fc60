package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/template"
	"time"
)

// serverNames is every server the driver knows, in report order. A Go server is a main package
// at bench/servers/NAME; nginx is configured from bench/nginx/nginx.conf.tmpl.
var serverNames = []string{"nethttp", "fasthttp", "nbio", "nginx", "gnet", "uring-floor", "dwell", "dwell-uring", "dwell-nostats", "dwell-mw", "dwell-metrics"}

// partial names the servers that take part in some figures only: which, and why not the others.
var partial = map[string]struct {
	figures []string
	why     string
}{
	"dwell-mw":      {[]string{"hello", "allocs"}, "dwell with request id, access log (to /dev/null) and recovery: measured on hello only"},
	"dwell-metrics": {[]string{"hello", "allocs"}, "dwell-mw with promdwell's metrics middleware: measured on hello only"},
	"dwell-nostats": {[]string{"hello"}, "dwell built without its statistics (the dwell_nostats tag), to show what counting costs: measured on hello only"},
	"gnet": {[]string{"hello", "c1", "close", "pipeline"}, "a raw event loop that answers GET /hello, the floor of the CPU figures, " +
		"not an HTTP server (no files, bodies, long polls or net/http handlers)"},
	"uring-floor": {[]string{"hello", "c1", "close", "pipeline"}, "the io_uring floor: a raw io_uring loop (multishot accept and receive, " +
		"provided buffers, each turn's sends in one io_uring_enter) with gnet's least HTTP, not an HTTP server"},
}

// sitsOut names figures a server is left out of only to keep the full run shorter:
// nbio is neither a reference nor the floor of the one-connection and pipelined figures.
var sitsOut = map[string][]string{"nbio": {"c1", "pipeline"}}

// builtFrom names the servers built from another's package, with build tags: the same server,
// compiled differently.
var builtFrom = map[string]struct{ pkg, tags string }{
	"dwell-nostats": {"dwell", "dwell_nostats"},
}

// startedWith names the servers that are another server's binary started with variables of
// their own in its environment: the same build, run differently. Each takes part in the figures
// of the server it runs (measuredAs), is measured right after it in every round's turns (its
// place in serverNames, h2Contenders and wsContenders) and has a section of the report against
// it. why is the one line the report says of it; fallback is what the server logs when it could
// not do what the environment asked, and so measured something else (the report says so).
// A variable named here is taken out of the driver's own environment (clearStartedWithEnv), so
// that the other servers run with their defaults whatever the shell exported.
var startedWith = map[string]struct {
	of       string
	env      []string
	why      string
	fallback string
}{
	"dwell-uring": {"dwell", []string{"DWELL_POLLER=io_uring"},
		"dwell's binary started with DWELL_POLLER=io_uring: each loop watches its sockets through an io_uring instance instead of epoll",
		"io_uring cannot be used here"},
	"grpc-dwell-uring": {"grpc-dwell", []string{"DWELL_POLLER=io_uring"},
		"grpc-dwell's binary started with DWELL_POLLER=io_uring",
		"io_uring cannot be used here"},
	"dwell-ratelimit-uring": {"dwell-ratelimit", []string{"DWELL_POLLER=io_uring"},
		"dwell-ratelimit's binary started with DWELL_POLLER=io_uring",
		"io_uring cannot be used here"},
}

// envArgv is what runs between taskset and a server's binary: env with the server's variables
// (startedWith), which execs the binary in its place, so that the pid is still the server's;
// nothing for a server started with the driver's environment alone.
func envArgv(name string) []string {
	st, ok := startedWith[name]
	if !ok || len(st.env) == 0 {
		return nil
	}
	return append([]string{"env"}, st.env...)
}

// clearStartedWithEnv takes the variables startedWith sets out of the driver's environment,
// which every server inherits: a DWELL_POLLER exported in the shell would otherwise start dwell
// on io_uring too, and the two columns would measure the same thing.
func clearStartedWithEnv(logf func(string, ...any)) {
	seen := map[string]bool{}
	for _, name := range sortedKeys(startedWith) {
		for _, kv := range startedWith[name].env {
			k, _, _ := strings.Cut(kv, "=")
			if v, ok := os.LookupEnv(k); ok && !seen[k] {
				logf("ignoring %s=%s from the environment: only %s is started with %s", k, v, name, kv)
				os.Unsetenv(k)
			}
			seen[k] = true
		}
	}
}

// startedWithVersion is a server's version line, with what startedWith says of it.
func startedWithVersion(name, version string) string {
	if st, ok := startedWith[name]; ok {
		return version + "; " + st.why
	}
	return version
}

// serverModules maps a Go server to the module whose version the report shows.
var serverModules = map[string]string{
	"fasthttp": "github.com/valyala/fasthttp",
	"nbio":     "github.com/lesismal/nbio",
	"gnet":     "github.com/panjf2000/gnet/v2",
}

// server is one server under test.
type server struct {
	name string
	// bin is the built binary, or nginx's path.
	bin     string
	version string
	// lacks lists figures the server cannot take part in, with the reason.
	lacks map[string]string
	// ws marks a WebSocket contender (ws.go): it takes -addr and args, not -file.
	ws   bool
	args []string
	// h2 marks an HTTP/2 contender (h2.go): nginx and h2o are configured for HTTP/2, and a Go
	// server gets h2cArgs on plaintext (net/http's -h2c).
	h2      bool
	h2cArgs []string
	// grpc marks a gRPC contender (grpc.go): grpc-go's own server answers no GET, so it is ready
	// once it says it listens, which it says once it does.
	grpc bool
}

func (s *server) isNginx() bool { return s.name == "nginx" }

// argv is the command that starts s on port, pinned to the server CPU; with tlsMode (a key
// exchange, tls.go) a Go server serves HTTPS with the run's certificate (nginx's configuration
// says so for nginx).
func (r *runner) argv(s *server, port int, tlsMode string) []string {
	pin := append([]string{r.tools["taskset"], "-c", serverCPU}, envArgv(s.name)...)
	if s.name == h2oName {
		return r.h2oArgv(pin, s, port, tlsMode)
	}
	if s.isNginx() {
		prefix := filepath.Join(r.work, "nginx")
		return append(pin, s.bin, "-p", prefix+"/", "-c", filepath.Join(prefix, fmt.Sprintf("nginx-%d.conf", port)),
			"-e", filepath.Join(prefix, "error.log"))
	}
	if s.ws {
		return append(append(pin, s.bin, "-addr", fmt.Sprintf("127.0.0.1:%d", port)), s.args...)
	}
	argv := append(pin, s.bin, "-addr", fmt.Sprintf("127.0.0.1:%d", port), "-file", r.file)
	if tlsMode != "" {
		argv = append(argv, r.tlsArgs(tlsMode)...)
	} else if s.h2 {
		argv = append(argv, s.h2cArgs...)
	}
	if r.writeTimeout > 0 && s.h2 {
		argv = append(argv, "-write-timeout", r.writeTimeout.String())
	}
	return argv
}

// buildServers builds the Go servers and the load tool into the work directory. A server that
// does not exist or does not build is skipped with the reason, except the baseline.
func (r *runner) buildServers(ctx context.Context, names []string) ([]*server, error) {
	bin := filepath.Join(r.work, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return nil, err
	}
	if err := r.goBuild(ctx, filepath.Join(bin, "load"), "./cmd/load"); err != nil {
		return nil, fmt.Errorf("building the load tool: %w", err)
	}
	r.load = filepath.Join(bin, "load")
	var out []*server
	built := map[string]bool{} // binaries built, by path: a startedWith server runs another's
	for _, name := range names {
		s := &server{name: name, lacks: map[string]string{}}
		if name == "nginx" {
			path, ok := r.tools["nginx"]
			if !ok {
				r.skip(name, "nginx is not installed")
				continue
			}
			s.bin, s.version = path, r.meta.Versions["nginx"]
			s.lacks["park"] = "nginx has no long poll of its own"
			s.lacks["std"] = "nginx runs no Go handlers"
			s.lacks["allocs"] = "nginx is not a Go program"
			tlsLacks(s)
			out = append(out, s)
			continue
		}
		if name == baseName {
			// Built from the base revision's tree by buildBase.
			s.bin, s.version = r.base.bin, r.base.version()
			s.lacks["allocs"] = "the allocations benchmark (package allocs) runs this tree's servers only"
			tlsLacks(s)
			out = append(out, s)
			continue
		}
		pkg, tags := serverPackage(name)
		dir := filepath.Join(r.benchDir, "servers", pkg)
		if goFiles, _ := filepath.Glob(filepath.Join(dir, "*.go")); len(goFiles) == 0 {
			r.skip(name, fmt.Sprintf("bench/servers/%s does not exist yet", pkg))
			continue
		}
		s.bin = filepath.Join(bin, binName(name))
		if !built[s.bin] {
			if err := r.goBuild(ctx, s.bin, "./servers/"+pkg, tags); err != nil {
				if name == baseline {
					return nil, fmt.Errorf("building %s: %w", name, err)
				}
				r.skip(name, fmt.Sprintf("does not build: %v", err))
				continue
			}
			built[s.bin] = true
		}
		s.version = startedWithVersion(name, r.goServerVersion(name, s.bin))
		if p, ok := partial[measuredAs(name)]; ok {
			for _, id := range append(figureIDs(), "allocs") {
				if !slices.Contains(p.figures, id) {
					s.lacks[id] = p.why
				}
			}
		}
		for _, id := range sitsOut[measuredAs(name)] {
			s.lacks[id] = "left out of this figure to keep the full run shorter"
		}
		tlsLacks(s)
		out = append(out, s)
	}
	return out, nil
}

// buildContender builds a contender of the figures with columns of their own (gRPC, rate limit)
// into $WORK/bin and returns its binary, or false when it was skipped: a startedWith server's
// binary is that of the server it runs, built before it in the same list, and it is skipped
// when that one was.
func (r *runner) buildContender(ctx context.Context, name string) (string, bool) {
	bin := filepath.Join(r.work, "bin", binName(name))
	if st, ok := startedWith[name]; ok {
		if _, err := os.Stat(bin); err != nil {
			r.skip(name, fmt.Sprintf("%s, whose binary it runs, was not built", st.of))
			return "", false
		}
		return bin, true
	}
	pkg, tags := serverPackage(name)
	if err := r.goBuild(ctx, bin, "./servers/"+pkg, tags); err != nil {
		r.skip(name, fmt.Sprintf("does not build: %v", err))
		return "", false
	}
	return bin, true
}

// serverPackage is the package under bench/servers a Go server is built from, and its build
// tags.
func serverPackage(name string) (pkg, tags string) {
	if b, ok := builtFrom[name]; ok {
		return b.pkg, b.tags
	}
	if st, ok := startedWith[name]; ok {
		return serverPackage(st.of)
	}
	return name, ""
}

// binName is the file under $WORK/bin a Go server's binary is built into: its own name, or
// for a startedWith server the binary of the server it runs.
func binName(name string) string {
	if st, ok := startedWith[name]; ok {
		return binName(st.of)
	}
	return name
}

func (r *runner) goServerVersion(name, bin string) string {
	if mod, ok := serverModules[name]; ok {
		return mod + " " + moduleVersion(bin, mod)
	}
	if strings.HasPrefix(name, "dwell") {
		if out, err := exec.Command("git", "-C", r.benchDir, "rev-parse", "--short", "HEAD").Output(); err == nil {
			v := "github.com/dwellhttp/dwell at " + strings.TrimSpace(string(out))
			// What is measured is the working tree: say so when it differs from the commit.
			dirty := exec.Command("git", "-C", filepath.Join(r.benchDir, ".."), "diff", "--quiet", "HEAD", "--",
				".", ":(exclude)bench", ":(exclude)docs", ":(exclude)examples")
			if dirty.Run() != nil {
				v += " with uncommitted changes"
			}
			return v
		}
		return "github.com/dwellhttp/dwell (working tree)"
	}
	return "net/http of " + r.meta.GoVersion
}

func (r *runner) goBuild(ctx context.Context, out, pkg string, tags ...string) error {
	return r.goBuildIn(ctx, r.benchDir, out, pkg, tags...)
}

// goBuildIn builds pkg in the bench module at dir: the module's go.mod decides which tree's
// dwell the binary holds (its replace is relative).
func (r *runner) goBuildIn(ctx context.Context, dir, out, pkg string, tags ...string) error {
	cmd := exec.Command("go", goBuildArgs(out, pkg, tags...)...)
	cmd.Dir = dir
	var msg bytes.Buffer
	cmd.Stdout, cmd.Stderr = &msg, &msg
	if err := r.procs.run(ctx, cmd); err != nil {
		return fmt.Errorf("%w\n%s", err, strings.TrimSpace(msg.String()))
	}
	return nil
}

// goBuildArgs are go's arguments to build pkg into out, with tags if any.
func goBuildArgs(out, pkg string, tags ...string) []string {
	args := []string{"build", "-o", out}
	if len(tags) > 0 && tags[0] != "" {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	return append(args, pkg)
}

// nginxConf renders the template for one port, serving HTTPS with the run's certificate when
// secure is set, and HTTP/2 (h2c on plaintext, h2 by ALPN over TLS) when h2 is.
func (r *runner) nginxConf(port int, secure, h2 bool) error {
	prefix := filepath.Join(r.work, "nginx")
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return err
	}
	tmpl, err := template.ParseFiles(filepath.Join(r.benchDir, "nginx", "nginx.conf.tmpl"))
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(prefix, fmt.Sprintf("nginx-%d.conf", port)))
	if err != nil {
		return err
	}
	defer f.Close()
	// Room for the memory figures' connections, wrk's and the listener's, with a margin.
	conns := r.cfg.conns + r.cfg.conns/4 + 1024
	data := map[string]any{"Prefix": prefix, "Port": port, "File": r.file, "FSDir": r.fsDir, "Download": r.download,
		"User": "", "Conns": conns, "Files": 2*conns + 64, "TLS": secure, "Cert": r.cert, "Key": r.key,
		"H2On": h2 && nginxHTTP2On(r.meta.Versions["nginx"]), "H2Listen": h2 && !nginxHTTP2On(r.meta.Versions["nginx"]),
		"SendTimeout": nginxTimeout(r.writeTimeout)}
	if os.Geteuid() == 0 {
		// The worker would otherwise drop to nobody, who may not read the work directory.
		data["User"] = "root"
	}
	return tmpl.Execute(f, data)
}

// running is a started server.
type running struct {
	srv  *server
	t    *tracked
	pid  int
	port int
	addr string
	log  string
	// tls: the server serves HTTPS.
	tls bool
}

func (rs *running) scheme() string {
	if rs.tls {
		return "https"
	}
	return "http"
}

// startServer starts s on a free port and waits until it answers GET /hello; with tlsMode (a
// key exchange) it serves HTTPS.
func (r *runner) startServer(ctx context.Context, s *server, tlsMode string) (*running, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	switch {
	case s.name == h2oName:
		err = r.h2oConf(port, tlsMode != "")
	case s.isNginx():
		err = r.nginxConf(port, tlsMode != "", s.h2)
	}
	if err != nil {
		return nil, err
	}
	argv := r.argv(s, port, tlsMode)
	logPath := filepath.Join(r.work, fmt.Sprintf("%s-%d.log", s.name, port))
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	t, err := r.procs.start(cmd)
	if err != nil {
		return nil, err
	}
	rs := &running{srv: s, t: t, pid: cmd.Process.Pid, port: port, addr: fmt.Sprintf("127.0.0.1:%d", port), log: logPath, tls: tlsMode != ""}
	if err := r.waitReady(ctx, rs); err != nil {
		r.procs.stop(t)
		return nil, fmt.Errorf("%s: %w\n%s", s.name, err, tail(logPath))
	}
	return rs, nil
}

// waitReady waits for the "listening http://" line ("https://" over TLS; Go servers print it)
// and then for a 200 to GET /hello, so a server is measured only once it serves. An HTTP/2
// contender is asked over HTTP/2 alone (h2c with prior knowledge, or h2 by ALPN), which a
// plaintext nginx listener with http2 also needs: before 1.25.1 it speaks nothing else.
func (r *runner) waitReady(ctx context.Context, rs *running) error {
	deadline := time.Now().Add(15 * time.Second)
	// The run's self-signed certificate is the load tool's to check.
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	if rs.srv.h2 {
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP2(true)
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	client := &http.Client{Timeout: time.Second, Transport: tr}
	defer client.CloseIdleConnections()
	sawLine := rs.srv.isNginx() || rs.srv.name == h2oName
	for time.Now().Before(deadline) {
		select {
		case <-rs.t.done:
			return fmt.Errorf("exited before it was ready")
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if !sawLine {
			sawLine = hasLine(rs.log, "listening "+rs.scheme()+"://")
		}
		if sawLine && rs.srv.grpc {
			return nil
		}
		if sawLine {
			resp, err := client.Get(rs.scheme() + "://" + rs.addr + "/hello")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK && (!rs.srv.h2 || resp.ProtoMajor == 2) {
					return nil
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("not ready within 15 s")
}

func (r *runner) stopServer(rs *running) {
	r.procs.stop(rs.t)
}

// fellBack returns the line of a server's log that says it could not do what its startedWith
// variables asked (dwell-uring's "io_uring cannot be used here", after which its loops poll with
// epoll), "" when there is none or the server has no such variables.
func fellBack(name, log string) string {
	st, ok := startedWith[name]
	if !ok || st.fallback == "" {
		return ""
	}
	b, err := os.ReadFile(log)
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.Contains(line, st.fallback) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

func hasLine(path, prefix string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), prefix) {
			return true
		}
	}
	return false
}

// tail returns the last lines of a log, to show why a server failed.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-10):], "\n")
}

// freePort asks the kernel for an unused port. Another process could take it before the server
// binds it; on loopback during a benchmark that does not happen in practice, and a server that
// fails to bind fails its measurement loudly.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
