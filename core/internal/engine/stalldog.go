package engine

import "time"

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
