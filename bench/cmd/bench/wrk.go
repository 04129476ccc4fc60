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

// pipelineScript makes wrk send pipelineDepth requests in each write and wait for as many
// responses before the next write: wrk counts the requests in what request returns, counts every
// response as a request done, and takes one latency sample per batch. init runs after wrk has set
// the Host field, so each request is the one wrk would send (with -H fields). It ends with
// wrkScript's summary.
var pipelineScript = fmt.Sprintf(`local depth = %d

init = function(args)
  local batch = {}
  for i = 1, depth do
    batch[i] = wrk.format()
  end
  pipelined = table.concat(batch)
end

request = function()
  return pipelined
end

`, pipelineDepth) + wrkScript

// pipelineDepth is how many requests the pipeline figure sends in one write.
const pipelineDepth = 16

// wrkConns and wrkThreads are the load of the wrk figures but c1: one thread keeps wrk on its
// one CPU, 50 connections keep a single-core server busy without queueing for long.
const (
	wrkConns   = 50
	wrkThreads = 1
)

// wrkArgv is the pinned wrk command for url. report adds the script that prints the summary; a
// pipelined load always runs its own script, which prints it too.
func (r *runner) wrkArgv(url string, secs int, load wrkLoad, report bool) []string {
	argv := []string{r.tools["taskset"], "-c", loadCPU, r.tools["wrk"],
		fmt.Sprintf("-t%d", wrkThreads), fmt.Sprintf("-c%d", load.conns), fmt.Sprintf("-d%ds", secs)}
	if load.header != "" {
		argv = append(argv, "-H", load.header)
	}
	switch {
	case load.pipelined:
		argv = append(argv, "-s", r.pipelineLua)
	case report:
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
