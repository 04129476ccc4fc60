package engine

import (
	"log/slog"
	"sync/atomic"
	"time"
)

// Stalls: code that blocks a loop's thread (time.Sleep, a channel receive, a blocking system
// call) or runs on it for long stops the loop, and with it every connection it serves. The loop
// cannot notice while it is blocked, so a watchdog goroutine (Watch, one per server) looks at
// the loops every quarter of the threshold.
//
// What is timed is a call of application code — whatever the loop brackets with EnterApp and
// LeaveApp, from the moment it switches into it until it returns or parks — not the loop's
// turn: a turn made long by the loop's own work or by a loop waiting for a CPU blames no
// application code. The loop numbers those calls (appSeq: odd while one runs, two atomic
// additions a call), and a call the watchdog sees running on two looks three quarters of the
// threshold apart is a stall. The watchdog then takes the stack of the goroutine running the
// loop's code (stallstack.go), while the stall goes on, and tells from it what the code is
// doing: blocked (parked in the runtime, or in a system call) or running, and in which frame of
// application code; and whether the machine was short of CPU meanwhile (stallcpu.go). Once the
// call has returned or parked, the loop reports the stall once, with what the call served, and
// counts it — or, when no application code is to blame (the call was the loop's own work on the
// application's behalf, or it waited for a CPU more than it ran), says so instead, without
// counting it. A turn that runs past the threshold with no call to blame is reported the same
// way, as the loop's own.

// A StallWatch is what a loop keeps for the watchdog: written by the loop, read by the watchdog
// and by the server's figures, so each field is atomic but for the loop's own copy and the
// watchdog's own record.
type StallWatch struct {
	turnStart   atomic.Int64              // loop clock at the current turn's start; 0 while the loop polls
	appSeq      atomic.Uint64             // calls of application code, twice: odd while one runs
	note        atomic.Pointer[StallNote] // noted by the watchdog, for the loop to report
	stalls      atomic.Int64
	longestTurn atomic.Int64
	longest     int64   // the loop's own copy of longestTurn
	watched     watched // the watchdog's own
}

// A StallNote is what the watchdog saw of a stall, for the loop to report once it is over. The
// watchdog writes its fields before it publishes the note (StallWatch.note) but for stack,
// which it writes before it sets ready; the loop writes the rest, and reads stack once ready is
// set.
type StallNote struct {
	app   bool    // a call of application code ran for the threshold (else: a turn did)
	seq   uint64  // the call's number (appSeq)
	since int64   // loop clock: when the stall began, as far as the watchdog can tell
	cpu   CPUMark // the schedulers' figures from before, to compare with after

	stack LoopStack // the stack taken while the stall went on
	ready atomic.Bool

	end   int64 // loop clock: when the call returned or parked, or the turn ended
	ended bool

	// Serving is what the call that stalled was serving, as log attributes (the loop's words:
	// a request's route and path), set by the loop when EndApp returns the note.
	Serving []any
}

// BeginTurn marks the start of an iteration, at the loop clock's reading for it.
func (w *StallWatch) BeginTurn(now int64) { w.turnStart.Store(max(now, 1)) } // 0 stands for none

// EndTurn marks the end of an iteration, at end, before the loop polls again: it keeps the
// longest turn, and returns the stall the watchdog saw when it is to be reported now (Report).
func (w *StallWatch) EndTurn(end int64) *StallNote {
	d := end - w.turnStart.Load()
	w.turnStart.Store(0)
	if d > w.longest {
		w.longest = d
		w.longestTurn.Store(d)
	}
	n := w.note.Load()
	if n == nil {
		return nil
	}
	if !n.ended {
		n.end, n.ended = end, true
	}
	// Not ready, it is reported at the end of a later turn, which the watchdog posts; the
	// watchdog may replace it meanwhile (check), hence the swap.
	if n.ready.Load() && w.note.CompareAndSwap(n, nil) {
		return n
	}
	return nil
}

// EnterApp and LeaveApp bracket a call of application code on the loop (see above).
func (w *StallWatch) EnterApp() { w.appSeq.Add(1) }
func (w *StallWatch) LeaveApp() { w.appSeq.Add(1) }

// NextApp marks the start of another call while one runs: the next pipelined request's
// handler, run right after the last one's in the same coroutine.
func (w *StallWatch) NextApp() { w.appSeq.Add(2) }

// Noted reports whether the watchdog has noted a stall not yet reported: only then need a call
// that returns or parks say so (EndApp), so that the check at its call sites stays a load.
func (w *StallWatch) Noted() bool { return w.note.Load() != nil }

// EndApp records, for the report at the end of the turn, that the call of application code in
// which the watchdog saw a stall is returning or parking, at now. It returns the note, for the
// loop to say what the call served (StallNote.Serving), or nil when the note is not this call's:
// the end of the turn ends it then.
func (w *StallWatch) EndApp(now int64) *StallNote {
	n := w.note.Load()
	if n == nil || n.ended || w.appSeq.Load() != n.seq {
		return nil
	}
	n.end, n.ended = now, true
	return n
}

// Stalls returns how many stalls have been blamed on application code.
func (w *StallWatch) Stalls() int64 { return w.stalls.Load() }

// LongestTurn returns the longest turn the loop has taken.
func (w *StallWatch) LongestTurn() time.Duration { return time.Duration(w.longestTurn.Load()) }

// Report logs the stall n the watchdog noted: as application code's, counted, when application
// code blocked the loop or ran on it for the threshold; else as the loop's own slowness, saying
// why. loop numbers the loop in the log.
func (w *StallWatch) Report(n *StallNote, log *slog.Logger, loop int) {
	d := time.Duration(n.end - n.since)
	st := &n.stack
	starved := n.cpu.StarvedSince()
	attrs := []any{"loop", loop}
	msg, blamed := "", true
	switch {
	case st.Taken && st.App != "" && st.Blocked != "":
		msg = "dwell: loop stalled: application code blocked the loop's thread (use wait.Do for blocking work)"
		attrs = append(attrs, "blocked", d, "in", st.Blocked, "frame", st.App)
	case n.app && st.Taken && st.App != "" && starved == "":
		msg = "dwell: loop stalled: application code ran on the loop's thread for too long (use wait.Do for long computations)"
		attrs = append(attrs, "ran", d, "frame", st.App)
	case n.app && !st.Taken && starved == "":
		msg = "dwell: loop stalled: application code blocked or ran on the loop's thread (it returned before its stack could be taken)"
		attrs = append(attrs, "blocked", d)
	default:
		msg, blamed = "dwell: loop slow, not because of application code: "+slowReason(n, starved), false
		attrs = append(attrs, "took", d)
		if st.App != "" {
			attrs = append(attrs, "frame", st.App)
		}
	}
	attrs = append(attrs, n.Serving...)
	if st.Taken {
		attrs = append(attrs, "stack", st.Text)
	}
	if blamed {
		w.stalls.Add(1)
		log.Warn(msg, attrs...)
	} else {
		log.Info(msg, attrs...)
	}
}

// slowReason says why a long call or turn blames no application code.
func slowReason(n *StallNote, starved string) string {
	st := &n.stack
	switch {
	case starved != "":
		return "it waited for a CPU (" + starved + ")"
	case !st.Taken:
		return "its own work (the turn ended before its stack could be taken)"
	case st.App != "":
		return "many short calls of application code, none of them for the threshold"
	case st.Own != "":
		return "its own work (" + st.Own + ")"
	}
	return "its own work"
}

// A Watched is a loop as the stall watchdog sees it.
type Watched interface {
	StallWatch() *StallWatch
	// Now reads the loop's clock from the watchdog's goroutine.
	Now() int64
	// Label is the profiler label of the loop's goroutines (LabelGoroutine).
	Label() string
	// Turn has the loop run a turn, whose end reports the stall the watchdog has given its
	// stack to.
	Turn()
}

// Watch is a server's watchdog: every quarter threshold it looks at each loop, until stop is
// closed. frames are the functions in which the loops' goroutines run their code (see
// ReadProfile).
func Watch(loops []Watched, threshold time.Duration, frames []string, stop <-chan struct{}) {
	t := time.NewTicker(max(threshold/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		var due []Watched
		for _, l := range loops {
			if l.StallWatch().check(l.Now(), threshold) {
				due = append(due, l)
			}
		}
		if len(due) > 0 {
			takeStacks(due, frames) // one look at the goroutines for all of them
		}
	}
}

// watched is what the watchdog keeps of a loop between its looks.
type watched struct {
	seq      uint64 // the loop's appSeq when last seen, first seen at seqAt (loop clock)
	seqAt    int64
	marked   int64 // the turn the scheduler's figures in cpu were taken in
	cpu      CPUMark
	noted    int64  // the start of the last turn noted
	appNoted uint64 // the last call noted
	note     *StallNote
}

// check runs on the watchdog: it reports whether it noted a stall whose stack is to be taken.
// A call of application code seen running three quarters of the threshold apart is noted once,
// and supersedes a note of its turn not yet reported that was taken while another call, or
// none, ran (the turn's note of a call is that call's); a turn running for the threshold is
// noted once, unless a note is pending. A turn that is not in application code while the
// machine is short of CPU needs no stack to be reported: it waited. The watchdog also keeps
// what a report will compare with: the schedulers' figures from when a long turn was first
// seen going on.
func (s *StallWatch) check(now int64, threshold time.Duration) bool {
	w := &s.watched
	seq := s.appSeq.Load()
	if seq != w.seq {
		w.seq, w.seqAt = seq, now
	}
	start := s.turnStart.Load()
	if start == 0 {
		return false // polling
	}
	if start != w.marked && now-start >= int64(threshold)/4 {
		w.marked = start // a long turn seen going on: what the schedulers say now, for later
		w.cpu = ReadCPUMark(threshold)
	}
	var cpu CPUMark
	if w.marked == start {
		cpu = w.cpu
	}
	pending := s.note.Load()
	var n *StallNote
	switch {
	case seq&1 == 1 && seq != w.appNoted && now-w.seqAt >= int64(threshold)*3/4 &&
		(pending == nil || !pending.app && pending.seq != seq):
		w.appNoted, w.noted = seq, start
		n = &StallNote{app: true, seq: seq, since: w.seqAt, cpu: cpu}
	case start != w.noted && now-start >= int64(threshold) && pending == nil:
		w.noted = start
		n = &StallNote{seq: seq, since: start, cpu: cpu}
		if seq&1 == 0 && cpu.StarvedSince() != "" {
			n.ready.Store(true) // the loop's own work, or a wait for a CPU: no stack to take
			s.note.Store(n)
			return false
		}
	default:
		return false
	}
	// The note goes to the loop at once, so that the code that stalled records what it served
	// when it returns or parks; its stack follows (publish).
	w.note = n
	s.note.Store(n)
	return true
}

// stillStalled reports whether the call (or turn) noted still runs.
func (s *StallWatch) stillStalled() bool {
	w := &s.watched
	return s.appSeq.Load() == w.note.seq && s.turnStart.Load() == w.noted
}

// publish gives the note the stack taken for it.
func (s *StallWatch) publish(stack LoopStack) {
	w := &s.watched
	n := w.note
	w.note = nil
	n.stack = stack
	n.ready.Store(true)
}

// takeStacks reads the goroutine profile once and gives each stalled loop's note the stack of
// its code, when it is found and the stall was still under way as the profile began: the
// profile records each goroutine's stack as it was then (a goroutine that runs again before
// the profile has read it records itself first), which is a moment after this checks. Each
// loop then runs a turn, whose end reports its stall.
func takeStacks(loops []Watched, frames []string) {
	under := make([]bool, len(loops))
	for i, l := range loops {
		under[i] = l.StallWatch().stillStalled()
	}
	p, err := ReadProfile(frames)
	for i, l := range loops {
		var st LoopStack
		if err == nil && under[i] {
			st = p.LoopStack(l.Label())
		}
		l.StallWatch().publish(st)
		l.Turn()
	}
}
