package engine

import (
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// Whether a loop waited for a CPU. A call that took the threshold of wall-clock time may have
// spent it waiting to run: behind the application's other goroutines in Go's scheduler, or
// behind other processes in the system's. Neither is the call's doing. Two figures tell: Go's
// scheduler counts how long goroutines wait to run (/sched/latencies, recorded when the wait
// ends), and Linux counts how long each thread waits on a run queue (/proc/self/task/*/
// schedstat). Both are read when a long turn is first seen going on, and again when its stall
// is reported: a goroutine that waited half the threshold or more meanwhile, or a thread that
// did, means that the machine was short of CPU. Neither figure names the loop's own goroutine,
// so a call that ran for the threshold while the machine was that short is not blamed: it is
// reported as what it may be, a loop that waited. A call parked or in a system call is blamed
// whatever the machine does.

// A CPUMark is what the schedulers said at one moment. The zero value was never read.
type CPUMark struct {
	taken     bool
	threshold time.Duration
	goWaits   uint64            // goroutines that had waited threshold/2 or more to run
	runQueue  map[string]uint64 // by thread id: nanoseconds waited on a run queue
}

const schedLatencies = "/sched/latencies:seconds"

// ReadCPUMark reads the schedulers' figures, for a stall of threshold.
func ReadCPUMark(threshold time.Duration) CPUMark {
	return CPUMark{taken: true, threshold: threshold, goWaits: goWaitsOver(threshold / 2), runQueue: runQueueWaits()}
}

// StarvedSince says how the machine was short of CPU since m was read, or "" if it was not
// (or m was never read).
func (m *CPUMark) StarvedSince() string {
	if !m.taken {
		return ""
	}
	half := m.threshold / 2
	if n := goWaitsOver(half) - m.goWaits; n > 0 {
		return strconv.FormatUint(n, 10) + " goroutines waited " + half.String() + " or more to run"
	}
	var most uint64
	for tid, w := range runQueueWaits() {
		if before, ok := m.runQueue[tid]; ok && w > before {
			most = max(most, w-before)
		}
	}
	if most >= uint64(half) {
		return "a thread waited " + time.Duration(most).Round(time.Millisecond).String() + " on the system's run queue"
	}
	return ""
}

// goWaitsOver returns how many times a goroutine has waited at least d to run.
func goWaitsOver(d time.Duration) uint64 {
	s := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	h := s[0].Value.Float64Histogram()
	var n uint64
	for i, c := range h.Counts {
		if h.Buckets[i] >= d.Seconds() {
			n += c
		}
	}
	return n
}

// runQueueWaits returns how long each thread of the process has waited on the system's run
// queue, where the system says (Linux); nil elsewhere.
func runQueueWaits() map[string]uint64 {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	waits := make(map[string]uint64, len(tasks))
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread has ended
		}
		// run time, run-queue wait, time slices: nanoseconds, nanoseconds, a count
		if f := strings.Fields(string(b)); len(f) >= 2 {
			if w, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				waits[t.Name()] = w
			}
		}
	}
	return waits
}
