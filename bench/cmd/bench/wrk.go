package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
)

// wrkScript makes wrk print its summary as one JSON line: its text output rounds the
// percentiles and has no p99.9. Latencies are in microseconds.
const wrkScript = `done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "WRKJSON {\"requests\":%d,\"duration_us\":%d,\"bytes\":%d,\"connect\":%d,\"read\":%d," ..
    "\"write\":%d,\"status\":%d,\"timeout\":%d,\"p50\":%d,\"p99\":%d,\"p999\":%d,\"max\":%d}\n",
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status,
    e.timeout, latency:percentile(50), latency:percentile(99), latency:percentile(99.9),
    latency.max))
end
`

// wrkSummary is what wrkScript prints.
type wrkSummary struct {
	Requests   int64   `json:"requests"`
	DurationUs int64   `json:"duration_us"`
	Bytes      int64   `json:"bytes"`
	Connect    int64   `json:"connect"`
	Read       int64   `json:"read"`
	Write      int64   `json:"write"`
	Status     int64   `json:"status"`
	Timeout    int64   `json:"timeout"`
	P50        float64 `json:"p50"`
	P99        float64 `json:"p99"`
	P999       float64 `json:"p999"`
	Max        float64 `json:"max"`
}

func (w wrkSummary) errors() int64 { return w.Connect + w.Read + w.Write + w.Status + w.Timeout }

// wrkConns and wrkThreads are the load of every wrk figure: one thread keeps wrk on its one
// CPU, 50 connections keep a single-core server busy without queueing for long.
const (
	wrkConns   = 50
	wrkThreads = 1
)

// wrkArgv is the pinned wrk command for url.
func (r *runner) wrkArgv(url string, secs int, header string, script bool) []string {
	argv := []string{r.tools["taskset"], "-c", loadCPU, r.tools["wrk"],
		fmt.Sprintf("-t%d", wrkThreads), fmt.Sprintf("-c%d", wrkConns), fmt.Sprintf("-d%ds", secs)}
	if header != "" {
		argv = append(argv, "-H", header)
	}
	if script {
		argv = append(argv, "-s", r.lua)
	}
	return append(argv, url)
}

// runWrk runs wrk and returns its summary (or nothing for a warm-up, which has no script).
func (r *runner) runWrk(ctx context.Context, argv []string) (wrkSummary, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := r.procs.run(ctx, cmd); err != nil {
		return wrkSummary{}, fmt.Errorf("wrk: %w: %s", err, strings.TrimSpace(errb.String()))
	}
	var s wrkSummary
	for line := range strings.SplitSeq(out.String(), "\n") {
		if js, ok := strings.CutPrefix(line, "WRKJSON "); ok {
			if err := json.Unmarshal([]byte(js), &s); err != nil {
				return s, fmt.Errorf("wrk summary %q: %w", js, err)
			}
			return s, nil
		}
	}
	return s, nil
}

// shellQuote quotes an argument for a POSIX shell when it needs it, so the report's commands
// can be pasted as they are.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?&;|<>(){}[]#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}
