package core

import (
	"reflect"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/dwellhttp/dwell/core/internal/engine"
)

// Stalls: application code that blocks the loop's thread (time.Sleep, a channel receive, a
// blocking system call) or runs on it for long stops the loop, and with it every connection it
// serves. The loop cannot notice while it is blocked, so a watchdog goroutine (one per server)
// looks at the loops every quarter of Options.StallThreshold.
//
// What is timed is a call of application code — a handler or continuation from the moment the
// loop switches into it until it returns or parks, a Post callback, a timer, a completion hook,
// a Protocol's method — not the loop's turn: a turn made long by the loop's own work (TLS
// handshakes, many connections' requests) or by a loop waiting for a CPU blames no handler.
// The loop numbers those calls (appSeq: odd while one runs, two atomic additions a call), and
// a call the watchdog sees running on two looks three quarters of the threshold apart is a
// stall. The watchdog then takes the stack of the goroutine running the loop's code
// (internal/engine/stallstack.go), while the stall goes on, and tells from it what the code is
// doing: blocked (parked in the runtime, or in a system call) or running, and in which frame of
// application code; and whether the machine was short of CPU meanwhile (internal/engine/stallcpu.go). Once
// the call has returned or parked, the loop logs the stall once, with the request's route and
// path, and counts it (Server.Stalls) — or, when no application code is to blame (the call was
// dwell's own work on the application's behalf, or it waited for a CPU more than it ran), says
// so instead, without counting it. A turn that runs past the threshold with no call to blame
// is reported the same way, as the loop's own.

// defaultStallThreshold is Options.StallThreshold's default.
const defaultStallThreshold = 200 * time.Millisecond

// A stallNote is what the watchdog saw of a stall, for the loop to report once it is over. The
// watchdog writes its fields before it publishes the note (Loop.stall) but for stack, which it
// writes before it sets ready; the loop writes the rest, and reads stack once ready is set.
type stallNote struct {
	app   bool           // a call of application code ran for the threshold (else: a turn did)
	seq   uint64         // the call's number (Loop.appSeq)
	since int64          // loop clock: when the stall began, as far as the watchdog can tell
	cpu   engine.CPUMark // the schedulers' figures from before, to compare with after (internal/engine/stallcpu.go)

	stack engine.LoopStack // the stack taken while the stall went on
	ready atomic.Bool

	end     int64 // loop clock: when the call returned or parked, or the turn ended
	ended   bool
	route   string // of the request whose code stalled, if any
	method  string
	path    string
	request bool
}

// beginTurn marks the start of an iteration, at the loop clock's reading for it (never 0,
// which stands for no turn).
func (l *Loop) beginTurn() {
	l.turnStart.Store(max(l.now, 1))
	if countStats {
		l.ctr.turns++
	}
}

// endTurn marks the end of an iteration before the loop polls again: it reports a stall the
// watchdog saw, and keeps the longest turn.
func (l *Loop) endTurn() {
	end := l.clock()
	d := end - l.turnStart.Load()
	l.turnStart.Store(0)
	if n := l.stall.Load(); n != nil {
		if !n.ended {
			n.end, n.ended = end, true
		}
		// Not ready, it is reported at the end of a later turn, which the watchdog posts; the
		// watchdog may replace it meanwhile (checkStall), hence the swap.
		if n.ready.Load() && l.stall.CompareAndSwap(n, nil) {
			l.reportStall(n)
		}
	}
	if d > l.longest {
		l.longest = d
		l.longestTurn.Store(d)
	}
}

// enterApp and leaveApp bracket a call of application code on the loop (see above).
func (l *Loop) enterApp() { l.appSeq.Add(1) }
func (l *Loop) leaveApp() { l.appSeq.Add(1) }

// nextApp marks the start of another call while one runs: the next pipelined request's
// handler, which a coroutine runs right after the last one's (Loop.chain).
func (l *Loop) nextApp() { l.appSeq.Add(2) }

// noteStall records, for the report at the end of the turn, that the call of application code
// in which the watchdog saw a stall — cx's handler or continuation, its completion hooks, or a
// callback (cx nil) — is returning or parking: when, and the request's route and path while
// they are there to read. It is called, from within the call, only when l.stall is set, so that
// the check stays a load at the call sites (the handler's frames while it parks stay as they
// were); the report itself is made on the loop's own stack, at the end of the turn.
//
//go:noinline
func (l *Loop) noteStall(cx *Ctx) {
	n := l.stall.Load()
	if n == nil || n.ended || l.appSeq.Load() != n.seq {
		return // not the call that ran when the stall was seen: the end of the turn ends the note
	}
	n.end, n.ended = l.clock(), true
	if cx != nil {
		n.request = true
		n.route = cx.routeName()
		if cx.req.Arena != nil { // gone in a continuation
			n.method, n.path = string(cx.req.Bytes(cx.req.Method)), string(cx.req.Bytes(cx.req.Path))
		}
	}
}

// watch is the server's watchdog: every quarter threshold it looks at each loop, until stop is
// closed.
func (s *Server) watch(loops []*Loop, threshold time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(max(threshold/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		var due []*Loop
		for _, l := range loops {
			if l.checkStall(threshold) {
				due = append(due, l)
			}
		}
		if len(due) > 0 {
			takeStacks(due) // one look at the goroutines for all of them
		}
	}
}

// checkStall runs on the watchdog: it reports whether it noted a stall of l whose stack is to
// be taken. A call of application code seen running three quarters of the threshold apart is
// noted once, and supersedes a note of its turn not yet reported that was taken while another
// call, or none, ran (the turn's note of a call is that call's); a turn running for the
// threshold is noted once, unless a note is pending. A turn that is not in application code
// while the machine is short of CPU needs no stack to be reported: it waited. The watchdog also
// keeps what a report will compare with: the schedulers' figures from when a long turn was first
// seen going on.
func (l *Loop) checkStall(threshold time.Duration) bool {
	w := &l.watched
	now := int64(time.Since(l.epoch))
	seq := l.appSeq.Load()
	if seq != w.seq {
		w.seq, w.seqAt = seq, now
	}
	start := l.turnStart.Load()
	if start == 0 {
		return false // polling
	}
	if start != w.marked && now-start >= int64(threshold)/4 {
		w.marked = start // a long turn seen going on: what the schedulers say now, for later
		w.cpu = engine.ReadCPUMark(threshold)
	}
	var cpu engine.CPUMark
	if w.marked == start {
		cpu = w.cpu
	}
	pending := l.stall.Load()
	var n *stallNote
	switch {
	case seq&1 == 1 && seq != w.appNoted && now-w.seqAt >= int64(threshold)*3/4 &&
		(pending == nil || !pending.app && pending.seq != seq):
		w.appNoted, w.noted = seq, start
		n = &stallNote{app: true, seq: seq, since: w.seqAt, cpu: cpu}
	case start != w.noted && now-start >= int64(threshold) && pending == nil:
		w.noted = start
		n = &stallNote{seq: seq, since: start, cpu: cpu}
		if seq&1 == 0 && cpu.StarvedSince() != "" {
			n.ready.Store(true) // the loop's own work, or a wait for a CPU: no stack to take
			l.stall.Store(n)
			return false
		}
	default:
		return false
	}
	// The note goes to the loop at once, so that the code that stalled records its request
	// when it returns or parks; its stack follows (publishStack).
	w.note = n
	l.stall.Store(n)
	return true
}

// stillStalled reports whether the call (or turn) noted still runs.
func (l *Loop) stillStalled() bool {
	w := &l.watched
	return l.appSeq.Load() == w.note.seq && l.turnStart.Load() == w.noted
}

// publishStack gives the note the stack taken for it, and has the loop run a turn, whose end
// reports the stall.
func (l *Loop) publishStack(stack engine.LoopStack) {
	w := &l.watched
	n := w.note
	w.note = nil
	n.stack = stack
	n.ready.Store(true)
	l.Post(noop)
	if testHookStall != nil {
		testHookStall(l)
	}
}

func noop() {}

// loopSerial numbers the loops of the process, for their labels.
var loopSerial atomic.Uint64

// labelLoop gives the calling goroutine, the loop's, its profiler label (see
// internal/engine/stallstack.go); the coroutines the loop makes inherit it.
func (l *Loop) labelLoop() { engine.LabelGoroutine(l.label) }

// loopFrames are the functions in which a loop's goroutines run its code: the loop's own, a
// handler's coroutine, a TLS handshake's.
var loopFrames = func() []string {
	pkg := engine.FuncPkg(reflect.ValueOf(loopLabel).Pointer())
	eng := engine.FuncPkg(reflect.ValueOf(engine.NewTLS).Pointer())
	return []string{pkg + ".(*Loop).run", pkg + ".newCoro.func1", eng + ".(*tlsConn).runHandshake"}
}()

// takeStacks reads the goroutine profile once and gives each stalled loop's note the stack of
// its code, when it is found and the stall was still under way as the profile began: the
// profile records each goroutine's stack as it was then (a goroutine that runs again before
// the profile has read it records itself first), which is a moment after this checks.
func takeStacks(loops []*Loop) {
	under := make([]bool, len(loops))
	for i, l := range loops {
		under[i] = l.stillStalled()
	}
	p, err := engine.ReadProfile(loopFrames)
	for i, l := range loops {
		var st engine.LoopStack
		if err == nil && under[i] {
			st = p.LoopStack(l.label)
		}
		l.publishStack(st)
	}
}

// testHookStall, when a test sets it, runs on the watchdog once it has noted a stall.
var testHookStall func(*Loop)

// reportStall logs the stall the watchdog noted: as application code's, counted, when
// application code blocked the loop or ran on it for the threshold; else as the loop's own
// slowness, saying why.
func (l *Loop) reportStall(n *stallNote) {
	d := time.Duration(n.end - n.since)
	st := &n.stack
	starved := n.cpu.StarvedSince()
	attrs := []any{"loop", l.id}
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
	if n.request {
		if n.route != "" {
			attrs = append(attrs, "route", n.route)
		}
		if n.path != "" {
			attrs = append(attrs, "method", n.method, "path", n.path)
		}
	}
	if st.Taken {
		attrs = append(attrs, "stack", st.Text)
	}
	if blamed {
		l.stalls.Add(1)
		l.log.Warn(msg, attrs...)
	} else {
		l.log.Info(msg, attrs...)
	}
}

// slowReason says why a long call or turn blames no application code.
func slowReason(n *stallNote, starved string) string {
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

// Stalls returns how many times application code has stalled the server's loops (see
// Options.StallThreshold) and the longest turn any loop has taken, stall or not. It may be
// called from any goroutine.
func (s *Server) Stalls() (n int64, longest time.Duration) {
	s.mu.Lock()
	loops := s.loops
	s.mu.Unlock()
	for _, l := range loops {
		n += l.stalls.Load()
		longest = max(longest, time.Duration(l.longestTurn.Load()))
	}
	return n, longest
}

// stallState is what a Loop keeps for the stall watchdog: written by the loop, read by the
// watchdog and by Server.Stalls, so each field is atomic but for the loop's own copy and the
// watchdog's own record.
type stallState struct {
	turnStart   atomic.Int64              // loop clock at the current turn's start; 0 while the loop polls
	appSeq      atomic.Uint64             // calls of application code, twice: odd while one runs
	self        atomic.Uintptr            // the loop's goroutine (gid.Self) while it runs, 0 before and after (owner.go)
	label       string                    // the loop's goroutines' profiler label (labelLoop)
	stall       atomic.Pointer[stallNote] // noted by the watchdog, for the loop to report
	stalls      atomic.Int64
	longestTurn atomic.Int64
	longest     int64   // the loop's own copy of longestTurn
	watched     watched // the watchdog's own
}

// watched is what the watchdog keeps of a loop between its looks.
type watched struct {
	seq      uint64 // the loop's appSeq when last seen, first seen at seqAt (loop clock)
	seqAt    int64
	marked   int64 // the turn the scheduler's figures in cpu were taken in
	cpu      engine.CPUMark
	noted    int64  // the start of the last turn noted
	appNoted uint64 // the last call noted
	note     *stallNote
}

// loopLabel is the profiler label of the loop numbered serial in the process (loopSerial).
func loopLabel(serial uint64) string { return strconv.FormatUint(serial, 10) }
