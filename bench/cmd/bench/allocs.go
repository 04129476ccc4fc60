package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// allocsCommand is the benchmark behind the allocations row (package allocs): every server in
// one process, with a client that allocates nothing.
const allocsCommand = "go test -run '^$' -bench Hello -benchmem -benchtime 20000x -count 3 ./allocs/"

// runAllocs runs allocsCommand in the bench module and returns the file holding its output, or
// "" when it failed (the row then reads n/a).
func (r *runner) runAllocs(ctx context.Context) string {
	r.logf("allocs: %s", allocsCommand)
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "Hello", "-benchmem", "-benchtime", "20000x", "-count", "3", "./allocs/")
	cmd.Dir = r.benchDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.logf("allocs: %v\n%s", err, out)
		return ""
	}
	path := filepath.Join(r.work, "allocs.txt")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		r.logf("allocs: %v", err)
		return ""
	}
	return path
}

// allocsFigure reads allocations per request, which only `go test -bench -benchmem` can count
// (the servers run in their own processes for the other figures), from the output of
// allocsCommand, or of any benchmarks whose sub-benchmarks are named after the servers (given
// with -allocs): every "BenchmarkX/SERVER-N ... B/op ... allocs/op" line becomes one sample.
func allocsFigure(path string, servers []string, logf func(string, ...any)) *Figure {
	f := &Figure{ID: "allocs", Title: "Allocations per request (hello)", Metrics: []*Metric{
		{ID: "allocs", Label: "allocations per request", Unit: "allocs"},
		{ID: "bytes", Label: "bytes allocated per request", Unit: "B"},
	}}
	if path == "" {
		return f
	}
	f.Commands = []string{"cd bench && " + allocsCommand}
	file, err := os.Open(path)
	if err != nil {
		logf("allocs: %v", err)
		return f
	}
	defer file.Close()
	seen := map[string]int{}
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name := fields[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i] // the -GOMAXPROCS suffix
		}
		srv := name[strings.LastIndexByte(name, '/')+1:]
		if !slices.Contains(servers, srv) {
			continue
		}
		seen[srv]++
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			switch fields[i+1] {
			case "allocs/op":
				f.metric("allocs").add(srv, seen[srv], v)
			case "B/op":
				f.metric("bytes").add(srv, seen[srv], v)
			}
		}
	}
	return f
}
