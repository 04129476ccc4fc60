package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as a fake server (fakeServer) when fakeServerEnv is set in its
// environment: started by the driver's own startServer, it shows which environment a server
// is really started with.
const (
	fakeServerEnv = "BENCH_TEST_FAKE_SERVER"
	// fakeNoUringEnv has the fake server log, when asked for io_uring, what dwell logs where
	// io_uring cannot be used.
	fakeNoUringEnv = "BENCH_TEST_NO_URING"
	fakeFallback   = "2026/01/02 03:04:05 WARN dwell: io_uring cannot be used here; the loops poll with epoll err=\"operation not permitted\""
)

func TestMain(m *testing.M) {
	if os.Getenv(fakeServerEnv) == "1" {
		fakeServer()
		return
	}
	os.Exit(m.Run())
}

// fakeServer takes the Go servers' -addr, prints their ready line and answers GET /hello with
// the DWELL_POLLER it was started with.
func fakeServer() {
	addr := ""
	for i, a := range os.Args {
		if a == "-addr" && i+1 < len(os.Args) {
			addr = os.Args[i+1]
		}
	}
	poller, ok := os.LookupEnv("DWELL_POLLER")
	if poller == "io_uring" && os.Getenv(fakeNoUringEnv) == "1" {
		fmt.Fprintln(os.Stderr, fakeFallback)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening http://%s\n", ln.Addr())
	body := "DWELL_POLLER unset"
	if ok {
		body = "DWELL_POLLER=" + poller
	}
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, body) }))
}

// TestStartedWithLists checks where dwell-uring stands: right after dwell in every contender
// list (after dwell-base with -base), in dwell's figures, HTTPS ones included, on dwell's binary;
// and the gRPC and rate-limit figures' io_uring columns, each right after the server whose
// binary it runs.
func TestStartedWithLists(t *testing.T) {
	for what, list := range map[string][]string{"servers": serverNames, "h2": h2Contenders, "ws": wsContenderNames()} {
		if i := slices.Index(list, "dwell"); i < 0 || i+1 >= len(list) || list[i+1] != "dwell-uring" {
			t.Errorf("%s: %v", what, list)
		}
	}
	for of, list := range map[string][]string{"grpc-dwell": grpcContenders, "dwell-ratelimit": rlContenders} {
		name := of + "-uring"
		if i := slices.Index(list, of); i < 0 || i+1 >= len(list) || list[i+1] != name {
			t.Errorf("%s is not right after %s: %v", name, of, list)
		}
		if measuredAs(name) != of || binName(name) != of {
			t.Errorf("%s runs %s's binary as %s", name, binName(name), measuredAs(name))
		}
		if pkg, _ := serverPackage(name); pkg != of {
			t.Errorf("%s built from %s", name, pkg)
		}
	}
	ws := wsContenders[slices.IndexFunc(wsContenders, func(c wsContender) bool { return c.name == "dwell-uring" })]
	if ws.dir != "dwell-ws" || ws.args != nil || ws.figures != nil {
		t.Errorf("the WebSocket dwell-uring is %+v, not dwell's server", ws)
	}
	if pkg, tags := serverPackage("dwell-uring"); pkg != "dwell" || tags != "" || binName("dwell-uring") != "dwell" {
		t.Errorf("dwell-uring built from %s (tags %q) into %s", pkg, tags, binName("dwell-uring"))
	}
	if binName("dwell-nostats") != "dwell-nostats" || binName("nethttp") != "nethttp" {
		t.Error("binName of the servers with binaries of their own")
	}
	if measuredAs("dwell-uring") != "dwell" || !isTLSContender("dwell-uring") {
		t.Error("dwell-uring does not take part in dwell's figures")
	}
	c, err := parse(t, "-quick")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(c.servers, "dwell-uring") || !slices.Contains(c.h2, "dwell-uring") || !slices.Contains(c.ws, "dwell-uring") {
		t.Errorf("the default lists leave dwell-uring out: servers %v, h2 %v, ws %v", c.servers, c.h2, c.ws)
	}
	c, err = parse(t, "-figures", "hello,h2-hello", "-servers", "dwell-uring,nginx,dwell", "-h2", "dwell-uring,dwell", "-base", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"nethttp", "nginx", "dwell", "dwell-base", "dwell-uring"}; !slices.Equal(c.servers, want) {
		t.Errorf("servers %v, want %v", c.servers, want)
	}
	if want := []string{"dwell", "dwell-base", "dwell-uring"}; !slices.Equal(c.h2, want) {
		t.Errorf("h2 %v, want %v", c.h2, want)
	}
}

// TestStartedWithArgv checks the commands that start dwell and dwell-uring, for every kind of
// figure and for the start-up figure's load tool: the same binary and arguments, dwell-uring's
// through env with DWELL_POLLER=io_uring, dwell's without.
func TestStartedWithArgv(t *testing.T) {
	r := &runner{tools: map[string]string{"taskset": "/usr/bin/taskset"}, work: "/w", file: "/w/file254.txt", cert: "/w/c.pem", key: "/w/k.pem"}
	for _, kind := range []struct {
		name    string
		ws, h2  bool
		tlsMode string
	}{{"HTTP/1.1", false, false, ""}, {"HTTPS", false, false, tlsX25519}, {"h2c", false, true, ""}, {"h2", false, true, tlsX25519}, {"WebSocket", true, false, ""}} {
		dwell := &server{name: "dwell", bin: "/w/bin/dwell", ws: kind.ws, h2: kind.h2}
		uring := &server{name: "dwell-uring", bin: "/w/bin/dwell", ws: kind.ws, h2: kind.h2}
		a, b := r.argv(dwell, 8080, kind.tlsMode), r.argv(uring, 8080, kind.tlsMode)
		want := append([]string{"/usr/bin/taskset", "-c", serverCPU, "env", "DWELL_POLLER=io_uring"}, a[3:]...)
		if !slices.Equal(b, want) || slices.ContainsFunc(a, func(s string) bool { return strings.Contains(s, "DWELL_POLLER") }) {
			t.Errorf("%s:\ndwell       %q\ndwell-uring %q", kind.name, a, b)
		}
	}
	if got := envArgv("dwell"); got != nil {
		t.Errorf("dwell is started through %q", got)
	}
}

// TestStartedWithEnv starts dwell and dwell-uring as the driver does (startServer, taskset, the
// process group) from a fake server that answers with its DWELL_POLLER: dwell-uring's is
// io_uring; dwell has none, even when the shell exported one. A dwell-uring that logs that
// io_uring cannot be used is then recorded and said in the report.
func TestStartedWithEnv(t *testing.T) {
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("taskset is missing")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeServerEnv, "1")
	t.Setenv("DWELL_POLLER", "io_uring") // exported in the shell: dwell must not see it
	r := &runner{procs: newProcs(), start: time.Now(), work: t.TempDir(), file: os.DevNull,
		tools: map[string]string{"taskset": taskset}}
	defer r.procs.stopAll()
	clearStartedWithEnv(t.Logf)
	if v, ok := os.LookupEnv("DWELL_POLLER"); ok {
		t.Fatalf("DWELL_POLLER=%s left in the driver's environment", v)
	}
	ask := func(name string) (string, *running) {
		t.Helper()
		rs, err := r.startServer(t.Context(), &server{name: name, bin: exe, lacks: map[string]string{}}, "")
		if err != nil {
			t.Fatal(err)
		}
		defer r.stopServer(rs)
		resp, err := http.Get("http://" + rs.addr + "/hello")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), rs
	}
	for name, want := range map[string]string{"dwell": "DWELL_POLLER unset", "dwell-uring": "DWELL_POLLER=io_uring"} {
		if got, rs := ask(name); got != want {
			t.Errorf("%s answered %q, want %q", name, got, want)
		} else if r.noteFallback("hello", name, rs.log); r.res.FellBack != nil {
			t.Errorf("%s: a fallback without its log line: %+v", name, r.res.FellBack[name])
		}
	}

	// Where io_uring cannot be used dwell says so, and then polls with epoll.
	t.Setenv(fakeNoUringEnv, "1")
	for _, fig := range []string{"hello", "hello", "c1"} {
		_, rs := ask("dwell-uring")
		r.noteFallback(fig, "dwell-uring", rs.log)
	}
	_, rs := ask("dwell")
	r.noteFallback("hello", "dwell", rs.log)
	fb := r.res.FellBack["dwell-uring"]
	if len(r.res.FellBack) != 1 || fb == nil || fb.Line != fakeFallback || !slices.Equal(fb.Figures, []string{"hello", "c1"}) {
		t.Fatalf("fell back: %+v", r.res.FellBack)
	}
	metric := &Metric{ID: "cpu_us", Label: "server CPU per request", Unit: "µs", Digits: 2}
	metric.add("nethttp", 1, 9)
	metric.add("dwell", 1, 2)
	metric.add("dwell-uring", 1, 1.8)
	hello := &Figure{ID: "hello", Title: "Hello, keep-alive", Metrics: []*Metric{metric}}
	r.res.Servers = []string{"nethttp", "dwell", "dwell-uring"}
	r.res.Figures = []*Figure{hello}
	r.res.Meta.Rounds = 1
	r.res.summarize()
	var b strings.Builder
	r.fellBackNotes(&b)
	r.startedWithSummary(&b)
	r.figureTable(&b, hello)
	out := b.String()
	for _, want := range []string{
		"Measured otherwise than named:\n\n- dwell-uring: DWELL_POLLER=io_uring did not take: the server logged `" + fakeFallback + "` (hello, c1)",
		"## dwell-uring against dwell\n\ndwell-uring is dwell's binary started with DWELL_POLLER=io_uring",
		"| figure | dwell | dwell-uring | dwell-uring ÷ dwell |\n|---|---|---|---|\n" +
			"| hello keep-alive: server CPU µs per request | 2.00 | 1.80 | 0.90× |\n",
		"| server CPU per request (µs) | 9.00 | 2.00 | 1.80 |\n",
		"- dwell-uring: measured without DWELL_POLLER=io_uring: the server logged `" + fakeFallback + "`.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}
