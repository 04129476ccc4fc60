package main

import (
	"fmt"
	"slices"
	"strings"
)

// ratioRows are the references a figure table compares a metric with: net/http always, nginx
// and fasthttp for the server CPU of the CPU figures, nginx for every metric of the HTTPS ones.
func ratioRows(fig, metric string) []string {
	if metric == "cpu_us" && slices.Contains(cpuFigures, fig) {
		return references
	}
	if slices.Contains(tlsFigureIDs(), fig) {
		return []string{"nginx", baseline}
	}
	return []string{baseline}
}

// refName is how the report names a reference.
func refName(ref string) string {
	if ref == baseline {
		return "net/http"
	}
	return ref
}

// versusLabels name the CPU figures in the tables against nginx and fasthttp.
var versusLabels = map[string]string{
	"hello":    "hello keep-alive (wrk -c50)",
	"c1":       "hello, one connection (wrk -c1)",
	"close":    "hello with Connection: close",
	"file":     "254-byte file",
	"fs":       "254-byte file of an embed.FS",
	"pipeline": fmt.Sprintf("hello pipelined %d deep", pipelineDepth),
}

// versus writes, for nginx and for fasthttp, a table of every other server's CPU per request over
// theirs on the CPU figures: the median of the per-round ratios, then each round's.
func (r *runner) versus(b *strings.Builder) {
	var refs []string
	for _, ref := range references[1:] {
		if slices.Contains(r.res.Servers, ref) {
			refs = append(refs, ref)
		}
	}
	var figs []*Figure
	for _, id := range cpuFigures {
		if f := r.res.figure(id); f != nil {
			figs = append(figs, f)
		}
	}
	if len(refs) == 0 || len(figs) == 0 {
		return
	}
	fmt.Fprintf(b, "## Against %s\n\n", strings.Join(refs, " and "))
	b.WriteString("Server CPU per request of each server divided by the reference's in the same round: the " +
		"median of the per-round ratios, then each round's ratio in round order. Below 1.00× a server " +
		"spends less CPU per request than the reference.")
	if slices.Contains(r.res.Servers, "gnet") {
		b.WriteString(" gnet is not an HTTP server but a floor: one gnet event loop with the least parsing " +
			"that keeps keep-alive, pipelined and `Connection: close` framing right, answering GET /hello " +
			"with a fixed response. It costs what a Go event loop and its syscalls cost with next to no " +
			"HTTP work; a server's gap to it is mostly the server's own work.")
	}
	if slices.Contains(r.res.Servers, "uring-floor") {
		b.WriteString(" uring-floor is the same floor on io_uring instead of epoll: one io_uring instance, " +
			"a multishot accept, a multishot receive per connection into provided buffers, each turn's " +
			"sends submitted by the one io_uring_enter that also collects the next completions, the loop " +
			"parked in Go's poller between turns as dwell's are. It is what io_uring allows a Go program " +
			"here at least per request: dwell-uring's gap to it is dwell's own work.")
	}
	b.WriteString("\n\n")
	for _, ref := range refs {
		var servers []string
		for _, s := range r.res.Servers {
			if s != ref {
				servers = append(servers, s)
			}
		}
		fmt.Fprintf(b, "| ÷ %s | %s |\n|---|%s\n", ref, strings.Join(servers, " | "), strings.Repeat("---|", len(servers)))
		for _, f := range figs {
			mt := f.metric("cpu_us")
			cells := make([]string, len(servers))
			for i, s := range servers {
				cells[i] = versusCell(f, mt, s, ref)
			}
			fmt.Fprintf(b, "| %s | %s |\n", versusLabels[f.ID], strings.Join(cells, " | "))
		}
		b.WriteString("\n")
	}
}

// versusCell is "median× (round 1 · round 2 · ...)", or why there is no ratio.
func versusCell(f *Figure, mt *Metric, srv, ref string) string {
	if _, ok := f.Absent[srv]; ok {
		return "—"
	}
	if _, ok := f.Absent[ref]; ok {
		return "—"
	}
	q, ok := mt.Summary[srv].Ratios[ref]
	if !ok {
		if len(f.Failed[srv])+len(f.Failed[ref]) > 0 {
			return "failed"
		}
		return "n/a"
	}
	s := fmt.Sprintf("%.2f×", q.Median)
	if len(q.Rounds) > 1 {
		rounds := make([]string, len(q.Rounds))
		for i, v := range q.Rounds {
			rounds[i] = fmt.Sprintf("%.2f", v.Value)
		}
		s += " (" + strings.Join(rounds, " · ") + ")"
	}
	return s
}
