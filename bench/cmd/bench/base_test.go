package main

import (
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// parse runs the driver's flag parsing on args, as main does on the command line.
func parse(t *testing.T, args ...string) (config, error) {
	t.Helper()
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return parseArgs(fs, args)
}

// TestBaseFlag checks the contender lists with and without -base: dwell-base right after dwell
// in each list that holds dwell, nowhere without -base, and a -base that would be measured in
// no figure refused.
func TestBaseFlag(t *testing.T) {
	c, err := parse(t, "-quick")
	if err != nil {
		t.Fatal(err)
	}
	if c.base != "" || !slices.Equal(c.servers, serverNames) || !slices.Equal(c.h2, h2Contenders) {
		t.Errorf("without -base: base %q, servers %v, h2 %v", c.base, c.servers, c.h2)
	}
	for _, tc := range []struct {
		args        []string
		servers, h2 []string
	}{
		{[]string{"-figures", "hello,h2-hello", "-servers", "dwell,nginx", "-h2", "dwell,h2o", "-base", "HEAD"},
			[]string{"nethttp", "nginx", "dwell", "dwell-base"}, []string{"h2o", "dwell", "dwell-base"}},
		{[]string{"-figures", "h2", "-h2", "dwell", "-base", "HEAD"},
			withBase(serverNames), []string{"dwell", "dwell-base"}},
		{[]string{"-figures", "tls-hello", "-servers", "dwell", "-h2", "none", "-base", "1a2b3c"},
			[]string{"nethttp", "dwell", "dwell-base"}, nil},
		// dwell-uring comes after dwell-base, which comes right after dwell.
		{[]string{"-figures", "hello,h2-one", "-servers", "dwell-uring,dwell", "-h2", "dwell-uring,nginx,dwell", "-base", "HEAD"},
			[]string{"nethttp", "dwell", "dwell-base", "dwell-uring"}, []string{"nginx", "dwell", "dwell-base", "dwell-uring"}},
		// dwell in the HTTP/2 list only: the HTTP/1.1 list stays as it was.
		{[]string{"-figures", "h2-one", "-servers", "nethttp", "-h2", "nginx,dwell", "-base", "HEAD~1"},
			[]string{"nethttp"}, []string{"nginx", "dwell", "dwell-base"}},
	} {
		c, err := parse(t, tc.args...)
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if c.base != tc.args[len(tc.args)-1] || !slices.Equal(c.servers, tc.servers) || !slices.Equal(c.h2, tc.h2) {
			t.Errorf("%v: base %q, servers %v, h2 %v; want servers %v, h2 %v", tc.args, c.base, c.servers, c.h2, tc.servers, tc.h2)
		}
	}
	i := slices.Index(serverNames, "dwell")
	if got := withBase(serverNames); !slices.Equal(got[i:i+3], []string{"dwell", "dwell-base", "dwell-uring"}) || len(got) != len(serverNames)+1 {
		t.Errorf("withBase(serverNames) = %v", got)
	}
	for _, args := range [][]string{
		{"-figures", "h2", "-h2", "nethttp,h2o", "-base", "HEAD"}, // dwell's HTTP/1.1 list, but no HTTP/1.1 figure
		{"-figures", "hello", "-servers", "nginx", "-base", "HEAD"},
		{"-figures", "ws", "-base", "HEAD"},
		{"-base=-x"},
		{"-servers", "dwell-base"}, // only -base adds it
	} {
		if c, err := parse(t, args...); err == nil {
			t.Errorf("%v accepted: servers %v, h2 %v", args, c.servers, c.h2)
		}
	}
}

// TestBaseOrder checks that dwell-base sorts right after dwell (dwell-uring after it) and takes
// part in the HTTPS figures as dwell does.
func TestBaseOrder(t *testing.T) {
	got := []string{"dwell-uring", "dwell-base", "h2o", "dwell", "nethttp", "nginx"}
	slices.SortFunc(got, byOrder(h2Contenders))
	if want := []string{"nethttp", "nginx", "h2o", "dwell", "dwell-base", "dwell-uring"}; !slices.Equal(got, want) {
		t.Errorf("sorted %v, want %v", got, want)
	}
	got = []string{"dwell-nostats", "dwell-uring", "dwell-base", "dwell"}
	slices.SortFunc(got, byOrder(serverNames))
	if want := []string{"dwell", "dwell-base", "dwell-uring", "dwell-nostats"}; !slices.Equal(got, want) {
		t.Errorf("sorted %v, want %v", got, want)
	}
	if !isTLSContender("dwell-base") || isTLSContender("dwell-mw") {
		t.Error("isTLSContender")
	}
	s := &server{name: "dwell-base", lacks: map[string]string{}}
	tlsLacks(s)
	if len(s.lacks) != 0 {
		t.Errorf("dwell-base sits out HTTPS figures: %v", s.lacks)
	}
}

// TestWorktreeCommands checks the git commands of the base worktree and the build the report
// shows.
func TestWorktreeCommands(t *testing.T) {
	if got := strings.Join(worktreeAdd("/src/dwell", "/tmp/w/base", "0123abcd"), " "); got != "git -C /src/dwell worktree add --detach /tmp/w/base 0123abcd" {
		t.Errorf("add: %s", got)
	}
	rm := worktreeRemove("/src/dwell", "/tmp/w/base")
	if len(rm) != 2 || strings.Join(rm[0], " ") != "git -C /src/dwell worktree remove --force /tmp/w/base" ||
		strings.Join(rm[1], " ") != "git -C /src/dwell worktree prune" {
		t.Errorf("remove: %q", rm)
	}
	if got := worktreeAddCommand("0123abcd"); got != "git worktree add --detach $WORK/base 0123abcd" {
		t.Errorf("report's add: %s", got)
	}
	if got := baseBuildCommand(); got != "go build -o $WORK/bin/dwell-base ./servers/dwell" {
		t.Errorf("report's build: %s", got)
	}
	if got := strings.Join(goBuildArgs("/w/bin/dwell-nostats", "./servers/dwell", "dwell_nostats"), " "); got != "build -o /w/bin/dwell-nostats -tags dwell_nostats ./servers/dwell" {
		t.Errorf("build with tags: %s", got)
	}
}

// fakeRepo makes a git repository shaped like dwell's: a root module github.com/dwellhttp/dwell
// whose Version is "committed", and a bench module that replaces it with ../ and whose
// servers/dwell prints it. The first commit has no bench module; the second, HEAD, has. The
// working tree then changes Version to "uncommitted".
func fakeRepo(t *testing.T) (repo string) {
	t.Helper()
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is missing", tool)
		}
	}
	// Whatever the machine's git configuration, commits need a name and nothing else.
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	repo = t.TempDir()
	write := func(path, text string) {
		t.Helper()
		p := filepath.Join(repo, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write("go.mod", "module github.com/dwellhttp/dwell\n\ngo 1.22\n")
	write("version.go", "package dwell\n\nconst Version = \"committed\"\n")
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "dwell")
	write("bench/go.mod", "module github.com/dwellhttp/dwell/bench\n\ngo 1.22\n\n"+
		"require github.com/dwellhttp/dwell v0.0.0-00010101000000-000000000000\n\n"+
		"replace github.com/dwellhttp/dwell => ../\n")
	write("bench/servers/dwell/main.go", "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/dwellhttp/dwell\"\n)\n\n"+
		"func main() { fmt.Println(dwell.Version) }\n")
	git("add", ".")
	git("commit", "-qm", "bench")
	write("version.go", "package dwell\n\nconst Version = \"uncommitted\"\n")
	return repo
}

// TestBuildBase builds dwell-base from a revision of a repository whose working tree differs
// from it: the binary holds the revision's code, not the working tree's, the version line
// names the commit, and the worktree is gone afterwards, as it is when the revision cannot
// be built.
func TestBuildBase(t *testing.T) {
	repo := fakeRepo(t)
	head, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	commit := strings.TrimSpace(string(head))
	run := func(rev string) (*runner, error) {
		r := &runner{cfg: config{base: rev}, procs: newProcs(), start: time.Now(), benchDir: filepath.Join(repo, "bench"), work: t.TempDir()}
		err := r.buildBase(t.Context())
		if _, statErr := os.Stat(filepath.Join(r.work, "base")); !os.IsNotExist(statErr) {
			t.Errorf("-base %s: the worktree is still there (%v)", rev, statErr)
		}
		list, listErr := exec.Command("git", "-C", repo, "worktree", "list", "--porcelain").Output()
		if listErr != nil || strings.Count(string(list), "worktree ") != 1 {
			t.Errorf("-base %s: git still knows of a worktree (%v):\n%s", rev, listErr, list)
		}
		return r, err
	}
	r, err := run("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if r.base == nil || r.base.commit != commit || r.meta.Base == nil || *r.meta.Base != (BaseRevision{Rev: "HEAD", Commit: commit}) {
		t.Fatalf("base %+v, meta %+v", r.base, r.meta.Base)
	}
	if v := r.base.version(); v != "github.com/dwellhttp/dwell at "+commit+" (-base HEAD)" {
		t.Errorf("version line %q", v)
	}
	out, err := exec.Command(r.base.bin).Output()
	if err != nil || string(out) != "committed\n" {
		t.Errorf("dwell-base printed %q (%v), want the committed version", out, err)
	}
	// The working tree's build, as the dwell contender's, holds the uncommitted change.
	cur := filepath.Join(r.work, "bin", "dwell")
	if err := r.goBuild(t.Context(), cur, "./servers/dwell"); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cur).Output(); err != nil || string(out) != "uncommitted\n" {
		t.Errorf("dwell printed %q (%v), want the working tree's version", out, err)
	}
	for rev, want := range map[string]string{"HEAD~1": "has no bench/servers/dwell", "no-such-branch": "not a commit"} {
		r, err := run(rev)
		if err == nil || !strings.Contains(err.Error(), want) || r.base != nil || r.meta.Base != nil {
			t.Errorf("-base %s: %v, base %+v; want an error saying %q", rev, err, r.base, want)
		}
	}
}

// TestBaseSummary renders the section against the base revision from a synthetic run: a row
// per main metric of each figure both took part in, dwell's over dwell-base's round by round,
// differences where ratios mean nothing, failures said so, and nothing from figures dwell-base
// was not in. Without -base there is no section and dwell has no ratio to it.
func TestBaseSummary(t *testing.T) {
	metric := func(id, unit string, digits int, vals map[string][]float64) *Metric {
		m := &Metric{ID: id, Unit: unit, Digits: digits}
		for srv, vs := range vals {
			for i, v := range vs {
				m.add(srv, i+1, v)
			}
		}
		return m
	}
	hello := &Figure{ID: "hello", Metrics: []*Metric{
		metric("rps", "req/s", 0, map[string][]float64{"nethttp": {50000, 50000, 50000}, "dwell": {100000, 99000, 101000}, "dwell-base": {100000, 110000, 101000}}),
		metric("cpu_us", "µs", 2, map[string][]float64{"nethttp": {9, 9, 9}, "dwell": {2.0, 1.9, 2.1}, "dwell-base": {2.5, 2.5, 2.5}}),
		metric("errors", "", 0, map[string][]float64{"dwell": {0, 0, 0}, "dwell-base": {0, 0, 0}}),
	}}
	upload := &Figure{ID: "upload", Metrics: []*Metric{
		metric("gbps", "GB/s", 2, map[string][]float64{"dwell": {2, 2, 2}, "dwell-base": {2, 2, 2}}),
		metric("rss_mib", "MiB", 1, map[string][]float64{"dwell": {3, 3.5, 4}, "dwell-base": {2, 2, 2}}),
	}}
	idle := &Figure{ID: "idle", Metrics: []*Metric{metric("kib", "KiB", 2, map[string][]float64{"dwell": {1, 1, 1}})}}
	idle.fail("dwell-base", "round 1: exited before it was ready")
	h2 := &Figure{ID: "h2-hello", Servers: []string{"nethttp", "dwell", "dwell-base"}, Refs: []string{h2Ref}, Metrics: []*Metric{
		metric("cpu_us", "µs", 2, map[string][]float64{"nethttp": {8, 8, 8}, "dwell": {3, 3, 3}, "dwell-base": {3, 2, 4}}),
	}}
	abuse := &Figure{ID: "h2-abuse-reset", Servers: []string{"dwell", "dwell-base"}, Refs: []string{h2Ref}, Metrics: []*Metric{
		metric("rss_mib", "MiB", 1, map[string][]float64{"dwell": {1.2}, "dwell-base": {1.5}}),
		metric("normal_p99_ms", "ms", 2, map[string][]float64{"dwell": {0.5}, "dwell-base": {0.45}}),
		metric("cpu_pct", "%", 0, map[string][]float64{"dwell": {50}, "dwell-base": {51}}),
	}}
	// A WebSocket contender is named dwell too; dwell-base is not one.
	ws := &Figure{ID: "ws-echo", Servers: []string{"dwell", "gws"}, Metrics: []*Metric{
		metric("cpu_us", "µs", 2, map[string][]float64{"dwell": {4, 4, 4}, "gws": {5, 5, 5}}),
	}}
	allocs := &Figure{ID: "allocs", Absent: map[string]string{"dwell-base": "this tree's servers only"}, Metrics: []*Metric{
		metric("allocs", "allocs", 0, map[string][]float64{"dwell": {0}}),
	}}
	const commit = "0123456789abcdef0123456789abcdef01234567"
	r := &runner{}
	r.res = Results{Servers: []string{"nethttp", "dwell", "dwell-base"}, Figures: []*Figure{hello, idle, upload, h2, abuse, ws, allocs},
		Meta: Meta{Rounds: 3, Base: &BaseRevision{Rev: "HEAD", Commit: commit}}}
	r.res.summarize()
	if q := hello.metric("cpu_us").Summary["dwell"].Ratios[baseName]; len(q.Rounds) != 3 || !near(q.Median, 0.8) {
		t.Errorf("dwell over dwell-base: %+v", q)
	}
	var b strings.Builder
	r.baseSummary(&b)
	out := b.String()
	want := []string{
		"## Against the base revision HEAD (" + commit + ")\n\n",
		"`git worktree add --detach $WORK/base " + commit + "`, then `go build -o $WORK/bin/dwell-base ./servers/dwell` in `$WORK/base/bench`",
		"| figure | dwell | dwell-base | dwell ÷ dwell-base |\n|---|---|---|---|\n" +
			"| hello keep-alive: server CPU µs per request | 2.00 (1.90–2.10) | 2.50 (2.50–2.50) | 0.80× (0.80 · 0.76 · 0.84) |\n" +
			"| hello keep-alive: requests per second (wrk -c50) | 100,000 (99,000–101,000) | 101,000 (100,000–110,000) | 1.00× (1.00 · 0.90 · 1.00) |\n" +
			"| idle keep-alive connection: KiB of server RSS | 1.00 (1.00–1.00) | failed | failed |\n" +
			"| upload over one connection: GB/s | 2.00 (2.00–2.00) | 2.00 (2.00–2.00) | 1.00× (1.00 · 1.00 · 1.00) |\n" +
			"| upload: server RSS growth, MiB | 3.5 (3.0–4.0) | 2.0 (2.0–2.0) | +1.5 MiB (difference) |\n",
		"| hello over h2c (h2load -c50 -m10): server CPU µs per request | 3.00 (3.00–3.00) | 3.00 (2.00–4.00) | 1.00× (1.00 · 1.50 · 0.75) |\n" +
			"| HTTP/2 abuse, rapid reset: server RSS growth, peak, MiB | 1.2 | 1.5 | -0.3 MiB (difference) |\n" +
			"| HTTP/2 abuse, rapid reset: normal client's p99 latency, ms | 0.50 | 0.45 | +0.05 ms (difference) |\n\n",
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("missing %q in\n%s", w, out)
		}
	}
	if strings.Contains(out, "allocations") || strings.Contains(out, "WebSocket") || strings.Contains(out, "With one round") {
		t.Errorf("rows or words of what was not compared:\n%s", out)
	}
	// The HTTP/2 summary has dwell-base's column right after dwell's.
	r.cfg.figures = []string{"h2-hello"}
	b.Reset()
	r.h2Summary(&b)
	if !strings.Contains(b.String(), "| figure | nethttp | dwell | dwell-base |\n") {
		t.Errorf("HTTP/2 summary:\n%s", b.String())
	}

	// One round: the section says a ratio is that round's alone.
	r.res.Meta.Rounds = 1
	b.Reset()
	r.baseSummary(&b)
	if !strings.Contains(b.String(), "With one round each ratio is that round's alone") {
		t.Errorf("one round:\n%s", b.String())
	}

	// Without -base: no section, and dwell's ratios are to the references alone.
	plain := &Figure{ID: "hello", Metrics: []*Metric{
		metric("cpu_us", "µs", 2, map[string][]float64{"nethttp": {9, 9, 9}, "dwell": {2, 2, 2}}),
	}}
	r.res = Results{Servers: []string{"nethttp", "dwell"}, Figures: []*Figure{plain}, Meta: Meta{Rounds: 3}}
	r.res.summarize()
	if refs := sortedKeys(plain.metric("cpu_us").Summary["dwell"].Ratios); !slices.Equal(refs, []string{"nethttp"}) {
		t.Errorf("dwell's ratios without -base: %v", refs)
	}
	b.Reset()
	r.baseSummary(&b)
	if b.Len() != 0 {
		t.Errorf("a section without -base:\n%s", b.String())
	}
}
