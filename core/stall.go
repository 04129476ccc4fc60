package core

import (
	"bytes"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/dwellhttp/dwell/internal/ctxhook"
)

// Stalls: a handler that blocks its thread (time.Sleep, a channel receive, a blocking system
// call) stops its loop, and with it every connection the loop serves. The loop cannot notice
// while it is blocked, so a watchdog goroutine (one per server) looks at the loops every half
// threshold: a loop whose turn — one iteration, from the poll's return to the next poll — has
// run longer than Options.StallThreshold is stalled. The watchdog records the stack of the
// goroutine running the loop's code at that moment (the handler's coroutine, or the loop's own
// goroutine in a callback), and the loop, once it runs again, logs the stall once: the loop, how
// long it was blocked, the route and path of the request whose code was running, and that
// stack. The loop's own cost is two atomic stores and a clock reading per iteration, and an
// atomic load when a handler returns or parks.

// defaultStallThreshold is Options.StallThreshold's default.
const defaultStallThreshold = 200 * time.Millisecond

// A stallNote is what the watchdog saw of a stalled turn, for the loop to report.
type stallNote struct {
	start int64  // the turn's start, on the loop clock
	stack string // of the goroutine running the loop's code when the watchdog looked
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
// watchdog saw in loop code outside any request, and keeps the longest turn.
func (l *Loop) endTurn() {
	end := l.clock()
	d := end - l.turnStart.Load()
	l.turnStart.Store(0)
	if l.stall.Load() != nil {
		l.reportStall(nil, end)
	}
	if d > l.longest {
		l.longest = d
		l.longestTurn.Store(d)
	}
}

// noteStall reports a stall the watchdog saw while cx's code ran, once that code has returned
// or parked: the request's path is still there to name. It is called only when l.stall is
// set, so that the check stays a load at the call sites (the handler's frames while it parks
// stay as they were).
//
//go:noinline
func (l *Loop) noteStall(cx *Ctx) { l.reportStall(cx, l.clock()) }

// reportStall logs the stall the watchdog noted, with cx's route and path when the stall was in
// its code, and counts it.
func (l *Loop) reportStall(cx *Ctx, now int64) {
	n := l.stall.Swap(nil)
	if n == nil {
		return
	}
	l.stalls.Add(1)
	attrs := []any{"loop", l.id, "blocked", time.Duration(now - n.start)}
	if cx != nil {
		if route := ctxhook.RouteName(cx.route); route != "" {
			attrs = append(attrs, "route", route)
		}
		if cx.req.Arena != nil { // gone in a continuation
			attrs = append(attrs, "method", string(cx.req.Bytes(cx.req.Method)),
				"path", string(cx.req.Bytes(cx.req.Path)))
		}
	}
	attrs = append(attrs, "stack", n.stack)
	l.log.Warn("dwell: loop stalled: a handler or callback blocked its thread (use wait.Do for blocking work)", attrs...)
}

// watch is the server's watchdog: every half threshold it looks at each loop's turn, until
// stop is closed.
func (s *Server) watch(loops []*Loop, threshold time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(max(threshold/2, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		for _, l := range loops {
			l.checkStall(threshold)
		}
	}
}

// checkStall runs on the watchdog: it notes l's turn if it has run for threshold, once a turn.
func (l *Loop) checkStall(threshold time.Duration) {
	start := l.turnStart.Load()
	if start == 0 || start == l.stallSeen || int64(time.Since(l.epoch))-start < int64(threshold) {
		return
	}
	l.stallSeen = start // the watchdog's own: one note per turn
	goid := l.goid.Load()
	if co := l.running.Load(); co != nil {
		goid = co.goid
	}
	l.stall.Store(&stallNote{start: start, stack: goroutineStack(goid)})
	if testHookStall != nil {
		testHookStall(l)
	}
}

// testHookStall, when a test sets it, runs on the watchdog once it has noted a stall.
var testHookStall func(*Loop)

// goroutineStack returns the stack of goroutine goid, from a dump of every goroutine (the only
// way to see another goroutine's stack; it stops the world for as long as the dump takes, which
// is why only a stall pays for it), or the whole dump if goid is not in it.
func goroutineStack(goid uint64) string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	head := []byte("goroutine " + strconv.FormatUint(goid, 10) + " [")
	i := bytes.Index(buf, head)
	if i < 0 {
		return string(buf)
	}
	rest := buf[i:]
	if end := bytes.Index(rest, []byte("\n\n")); end >= 0 {
		rest = rest[:end]
	}
	return string(rest)
}

// Stalls returns how many times the server's loops have stalled (see Options.StallThreshold)
// and the longest turn any loop has taken, stall or not. It may be called from any goroutine.
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
// watchdog and by Server.Stalls, so each field is atomic but for the loop's own copies.
type stallState struct {
	turnStart   atomic.Int64 // loop clock at the current turn's start; 0 while the loop polls
	goid        atomic.Uint64
	stall       atomic.Pointer[stallNote] // noted by the watchdog, for the loop to report
	stalls      atomic.Int64
	longestTurn atomic.Int64
	longest     int64 // the loop's own copy of longestTurn
	stallSeen   int64 // the watchdog's: the start of the last turn it noted
}
