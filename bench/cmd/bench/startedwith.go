package main

import (
	"fmt"
	"slices"
	"strings"
)

// The servers of startedWith (servers.go), another server's binary started with variables of
// their own in its environment (dwell-uring: dwell with DWELL_POLLER=io_uring), in the report:
// a section of their figures beside those of the server they run, and what the driver saw when
// a server logged that it could not do what its variables asked.

// FellBack is what the driver saw of a server that could not do what its startedWith variables
// asked: the line it logged, and the figures in whose measurements it did.
type FellBack struct {
	Line    string   `json:"line"`
	Figures []string `json:"figures"`
}

// noteFallback reads the log of a measurement of figure fig on server name for the line that
// says the server could not do what its variables asked, and records and warns of it, once a
// figure: that measurement was the server without them (dwell-uring's, epoll's).
func (r *runner) noteFallback(fig, name, log string) {
	line := fellBack(name, log)
	if line == "" {
		return
	}
	if r.res.FellBack == nil {
		r.res.FellBack = map[string]*FellBack{}
	}
	fb := r.res.FellBack[name]
	if fb == nil {
		fb = &FellBack{Line: line}
		r.res.FellBack[name] = fb
	}
	if slices.Contains(fb.Figures, fig) {
		return
	}
	fb.Figures = append(fb.Figures, fig)
	r.logf("WARNING: %s logged %q: %s did not take, so its %s figure measured %s without it",
		name, line, strings.Join(startedWith[name].env, " "), fig, startedWith[name].of)
}

// fellBackText is what the report says of a server that fell back, "" for one that did not.
func (r *runner) fellBackText(name string) string {
	fb := r.res.FellBack[name]
	if fb == nil {
		return ""
	}
	st := startedWith[name]
	return fmt.Sprintf("%s did not take: the server logged `%s` (%s), so what %s shows there is %s without it, not what its name says",
		strings.Join(st.env, " "), fb.Line, strings.Join(fb.Figures, ", "), name, st.of)
}

// fellBackNotes writes, under the report's summary, a line for each server that fell back.
func (r *runner) fellBackNotes(b *strings.Builder) {
	if len(r.res.FellBack) == 0 {
		return
	}
	b.WriteString("\nMeasured otherwise than named:\n\n")
	for _, name := range sortedKeys(r.res.FellBack) {
		fmt.Fprintf(b, "- %s: %s.\n", name, r.fellBackText(name))
	}
}

// startedWithRows are the rows of the sections of startedWith's servers: the section against the
// base revision's, the WebSocket summary's, and those of the figures with columns of their own
// (rate limit, gRPC), whose servers run dwell too.
func startedWithRows() []baseRow {
	rows := baseRows()
	for _, row := range wsSummaryRows {
		rows = append(rows, baseRow{row.fig, row.metric, "WebSocket " + row.label})
	}
	return append(rows,
		baseRow{"ratelimit", "cpu_us", "rate limit, under the limit: server CPU µs per request"},
		baseRow{"ratelimit-429", "cpu_us", "rate limit, over the limit: server CPU µs per refused request"},
		baseRow{"grpc-streams", "unary_ratio", "gRPC: unary call p99 with the streams open, over without"},
		baseRow{"grpc-streams", "rest_ratio", "gRPC: REST GET p99 with the streams open, over without"},
		baseRow{"grpc-streams", "stream_kib", "gRPC: RSS per open stream, KiB"},
		baseRow{"grpc-streams", "fanout_ms", "gRPC: a publish to every stream, ms"})
}

// startedWithSummary writes, for each server of startedWith the run measured, a section of the
// figures it and the server it runs both took part in: a row per main metric with both medians
// and its value over the other's, figure by figure in the run's order.
func (r *runner) startedWithSummary(b *strings.Builder) {
	for _, name := range sortedKeys(startedWith) {
		of := startedWith[name].of
		lines := r.pairLines(startedWithRows(), of, name, name, of)
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(b, "## %s against %s\n\n", name, of)
		after := of
		if of == baseOf {
			after += " (and after " + baseName + " with -base)"
		}
		fmt.Fprintf(b, "%s is %s. It takes part in every figure %s does, in the same rounds, right after %s "+
			"in the servers' turns, so that both meet the same state of the machine. "+
			"Each row gives both medians (with the range when there are several rounds) and %s's value over %s's "+
			"in the same round: the median of the per-round ratios, then each round's. Below 1.00× %s spends less "+
			"CPU, time or memory than %s; for requests, messages or bytes per second, or a share delivered, above "+
			"1.00× it does more. Where a ratio would mean nothing (RSS growth, the share of handshakes resumed, and "+
			"the abuse figures) the difference of the medians is given instead. A ratio within the rounds' ranges "+
			"is the machine's noise.",
			name, startedWith[name].why, of, after, name, of, name, of)
		if r.res.Meta.Rounds == 1 {
			b.WriteString(" With one round each ratio is that round's alone.")
		}
		if text := r.fellBackText(name); text != "" {
			fmt.Fprintf(b, "\n\n**%s.**", text)
		}
		fmt.Fprintf(b, "\n\n| figure | %s | %s | %s ÷ %s |\n|---|---|---|---|\n", of, name, name, of)
		for _, l := range lines {
			b.WriteString(l)
		}
		b.WriteString("\n")
	}
}
