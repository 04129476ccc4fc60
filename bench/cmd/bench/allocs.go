package main

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"
)

// allocsFigure is the hook for allocations per request, which only `go test -bench -benchmem`
// can count (the servers run in their own processes here). Until a benchmark exists, the row
// reads n/a. To fill it, run benchmarks whose sub-benchmarks are named after the servers, e.g.
//
//	go test -run '^$' -bench 'Hello' -benchmem -count 3 ./... > allocs.txt
//
// with BenchmarkHello/dwell, BenchmarkHello/nethttp, ..., and pass -allocs allocs.txt: every
// "BenchmarkX/SERVER-N ... B/op ... allocs/op" line becomes one sample.
func allocsFigure(path string, servers []string, logf func(string, ...any)) *Figure {
	f := &Figure{ID: "allocs", Title: "Allocations per request (hello)", Metrics: []*Metric{
		{ID: "allocs", Label: "allocations per request", Unit: "allocs"},
		{ID: "bytes", Label: "bytes allocated per request", Unit: "B"},
	}}
	if path == "" {
		return f
	}
	f.Commands = []string{"go test -run '^$' -bench . -benchmem  # output given to -allocs " + path}
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
