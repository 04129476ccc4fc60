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
