package serve

import (
	"reflect"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/dwellhttp/dwell/core/internal/engine"
)

// Stalls: application code that blocks the loop's thread or runs on it for long stops the loop,
// and with it every connection it serves. The watchdog (one goroutine per server), what a loop
// keeps for it and the marks of the loop's turns are the engine's (internal/engine/stallwatch.go,
// loop.go); the loop marks the calls of application code it makes (StallWatch.EnterApp in
// safely and switchTo) — a handler or continuation from the moment the loop switches into it
// until it returns or parks, a Post callback, a timer, a completion hook, a Protocol's method —
// and says here, when one of them stalled, which request it served: its route and path.

// defaultStallThreshold is Options.StallThreshold's default.
const defaultStallThreshold = 200 * time.Millisecond

// noteStall records, for the report at the end of the turn, that the call of application code
// in which the watchdog saw a stall — cx's handler or continuation, its completion hooks, or a
// callback (cx nil) — is returning or parking: when, and the request's route and path while
// they are there to read. It is called, from within the call, only when the watchdog has noted
// a stall (l.SW.Noted), so that the check stays a load at the call sites (the handler's frames
// while it parks stay as they were); the report itself is made on the loop's own stack, at the
// end of the turn.
//
//go:noinline
func (l *Loop) noteStall(cx *Ctx) {
	n := l.SW.EndApp(l.Clk.Read())
	if n == nil || cx == nil {
		return // not the call that ran when the stall was seen, or no request's
	}
	if route := cx.routeName(); route != "" {
		n.Serving = append(n.Serving, "route", route)
	}
	if cx.Req.Arena != nil { // gone in a continuation
		n.Serving = append(n.Serving, "method", string(cx.Req.Bytes(cx.Req.Method)), "path", string(cx.Req.Bytes(cx.Req.Path)))
	}
}

// watch is the server's watchdog (engine.Watch) over its loops, until stop is closed.
func (s *Server) watch(loops []*Loop, threshold time.Duration, stop <-chan struct{}) {
	w := make([]engine.Watched, len(loops))
	for i, l := range loops {
		w[i] = (*watchedLoop)(l)
	}
	engine.Watch(w, threshold, loopFrames, stop)
}

// A watchedLoop is a Loop as the watchdog's engine.Watched.
type watchedLoop Loop

func (w *watchedLoop) StallWatch() *engine.StallWatch { return &w.SW }
func (w *watchedLoop) Now() int64                     { return w.Clk.Elapsed() }
func (w *watchedLoop) Label() string                  { return w.label }

// Turn has the loop run a turn, whose end reports the stall.
func (w *watchedLoop) Turn() {
	l := (*Loop)(w)
	l.Post(noop)
	if TestHookStall != nil {
		TestHookStall(l)
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

// TestHookStall, when a test sets it, runs on the watchdog once it has noted a stall.
var TestHookStall func(*Loop)

// Stalls returns how many times application code has stalled the server's loops (see
// Options.StallThreshold) and the longest turn any loop has taken, stall or not. It may be
// called from any goroutine.
func (s *Server) Stalls() (n int64, longest time.Duration) {
	s.Mu.Lock()
	loops := s.Loops
	s.Mu.Unlock()
	for _, l := range loops {
		n += l.SW.Stalls()
		longest = max(longest, l.SW.LongestTurn())
	}
	return n, longest
}

// loopLabel is the profiler label of the loop numbered serial in the process (loopSerial).
func loopLabel(serial uint64) string { return strconv.FormatUint(serial, 10) }
