package core

import (
	"bufio"
	"bytes"
	"context"
	"reflect"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
)

// The stack of a stalled loop. Go reads one goroutine's stack only from that goroutine, which
// is the one stalled, and runtime.Stack's dump of every goroutine stops the world for as long as
// it takes (milliseconds per thousand goroutines, every loop stopped with the stalled one). The
// goroutine profile does not: it stops the world twice, briefly, whatever the number of
// goroutines, and records their stacks while they run on. Each loop's goroutine carries a
// profiler label (dwell.loop), which the coroutines it makes for handlers and TLS handshakes
// inherit; the stalled code's goroutine is the one of the loop's that is neither waiting in its
// poll nor switched away from (a coroutine's yield, the loop waiting for the coroutine it runs).
// Only that goroutine's stack is read, and reported; the profile is taken once for all the
// loops the watchdog finds stalled in one look, and only then.
//
// (Goroutines that handlers start inherit the label too, as they inherit any; profiles of the
// application show what its loops' handlers started. They are told apart from the loop's own by
// their frames.)

// labelKey is the profiler label that names a loop's goroutines.
const labelKey = "dwell.loop"

// loopSerial numbers the loops of the process, for their labels.
var loopSerial atomic.Uint64

// labelLoop gives the calling goroutine, the loop's, its label; the coroutines the loop makes
// inherit it.
func (l *Loop) labelLoop() {
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(labelKey, l.label)))
}

// A loopStack is what the watchdog read of a stalled loop's code.
type loopStack struct {
	taken   bool
	text    string // the goroutine's frames, as a traceback prints them
	app     string // the innermost frame of application code, "function (file:line)"; "" if none
	own     string // the innermost frame of dwell's own code, when there is no application frame
	blocked string // what the code waits in, when it is parked or in a system call; "" if running
}

// Where dwell's own code is, and the frames that tell the loop's goroutines from others.
var (
	corePkg      = funcPkg(reflect.ValueOf(loopLabel).Pointer())
	dwellModule  = strings.TrimSuffix(corePkg, "/core")
	loopFrames   = []string{corePkg + ".(*Loop).run", corePkg + ".newCoro.func1", corePkg + ".(*tlsConn).runHandshake"}
	switchedAway = "runtime.coroswitch"
	polling      = "/core/internal/netpoll.(*Poller).Wait"
)

// funcPkg returns the package path of the function at pc.
func funcPkg(pc uintptr) string {
	name := runtime.FuncForPC(pc).Name()
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		return name[:slash+1+dot]
	}
	return name
}

// takeStacks reads the goroutine profile once and gives each stalled loop's note the stack of
// its code, when it is found and the stall was still under way as the profile began: the
// profile records each goroutine's stack as it was then (a goroutine that runs again before
// the profile has read it records itself first), which is a moment after this checks.
func takeStacks(loops []*Loop) {
	under := make([]bool, len(loops))
	for i, l := range loops {
		under[i] = l.stillStalled()
	}
	var buf bytes.Buffer
	err := pprof.Lookup("goroutine").WriteTo(&buf, 1)
	var groups []*profileGroup
	if err == nil {
		groups = profileGroups(buf.Bytes())
	}
	for i, l := range loops {
		var st loopStack
		if err == nil && under[i] {
			st = findLoopStack(groups, l.label)
		}
		l.publishStack(st)
	}
}

// A profileGroup is one stack of the profile (debug=1: goroutines with the same stack and
// labels are counted together), with the loop label it carries.
type profileGroup struct {
	count  int
	pcs    []uintptr
	label  string
	frames []runtime.Frame // symbolized on demand
}

// profileGroups parses the goroutine profile's text: "N @ 0x.. 0x..", then "# labels: {...}"
// when the goroutines have labels, then the frames, which are read from the PCs instead (the
// text leaves out the runtime's frames at the top, which tell a parked goroutine).
func profileGroups(text []byte) []*profileGroup {
	var groups []*profileGroup
	var g *profileGroup
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if n, pcs, ok := strings.Cut(line, " @ "); ok && !strings.HasPrefix(line, "#") {
			count, err := strconv.Atoi(n)
			if err != nil {
				continue
			}
			g = &profileGroup{count: count}
			for _, f := range strings.Fields(pcs) {
				if pc, err := strconv.ParseUint(strings.TrimPrefix(f, "0x"), 16, 64); err == nil {
					g.pcs = append(g.pcs, uintptr(pc))
				}
			}
			groups = append(groups, g)
			continue
		}
		if labels, ok := strings.CutPrefix(line, "# labels: "); ok && g != nil {
			g.label = labelValue(labels, labelKey)
		}
	}
	return groups
}

// labelValue returns the value of key in a profile's labels, {"k":"v", ...}.
func labelValue(labels, key string) string {
	_, rest, ok := strings.Cut(labels, strconv.Quote(key)+":")
	if !ok {
		return ""
	}
	v, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return ""
	}
	s, _ := strconv.Unquote(v)
	return s
}

func (g *profileGroup) symbolized() []runtime.Frame {
	if g.frames == nil {
		frames := runtime.CallersFrames(g.pcs)
		for {
			f, more := frames.Next()
			g.frames = append(g.frames, f)
			if !more {
				break
			}
		}
	}
	return g.frames
}

// has reports whether one of the group's frames is the function named, or ends with suffix.
func (g *profileGroup) has(suffix string) bool {
	for _, f := range g.symbolized() {
		if strings.HasSuffix(f.Function, suffix) {
			return true
		}
	}
	return false
}

// runsLoopCode reports whether the group is a goroutine of a loop's that runs the loop's code
// now: the loop's own, or one of its coroutines, neither in its poll nor switched away.
func (g *profileGroup) runsLoopCode() bool {
	if g.has(switchedAway) || g.has(polling) {
		return false
	}
	for _, f := range loopFrames {
		if g.has(f) {
			return true
		}
	}
	return false
}

// findLoopStack finds the goroutine running the code of the loop labelled label and reads its
// stack. A handler that replaced its goroutine's labels (pprof.Do) leaves its coroutine
// unlabelled: then the one unlabelled goroutine running a loop's code is taken, if there is
// only one.
func findLoopStack(groups []*profileGroup, label string) loopStack {
	var found, unlabelled *profileGroup
	others := 0
	for _, g := range groups {
		switch {
		case g.label == label && g.runsLoopCode():
			found = g
		case g.label == "" && g.runsLoopCode():
			unlabelled = g
			others += g.count
		}
		if found != nil {
			break
		}
	}
	if found == nil && others == 1 {
		found = unlabelled
	}
	if found == nil {
		return loopStack{}
	}
	return readStack(found.symbolized())
}

// readStack tells from a stalled goroutine's frames where it is: the innermost frame of
// application code, what it waits in if it does not run, and the text of the whole.
func readStack(frames []runtime.Frame) loopStack {
	st := loopStack{taken: true}
	var b strings.Builder
	parked, inSyscall := false, false
	top := true // still in the runtime's frames at the top
	for _, f := range frames {
		b.WriteString(f.Function)
		b.WriteString("\n\t")
		b.WriteString(f.File)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(f.Line))
		b.WriteByte('\n')
		name := f.Function
		if top {
			switch {
			case name == "runtime.gopark" || name == "runtime.goparkunlock":
				parked = true
				continue
			case strings.HasPrefix(name, "syscall.") || strings.HasPrefix(name, "internal/runtime/syscall.") ||
				strings.HasPrefix(name, "golang.org/x/sys/unix.") || name == "runtime.entersyscall":
				inSyscall = true
			case strings.HasPrefix(name, "runtime.") || strings.HasPrefix(name, "internal/"):
				if parked && st.blocked == "" {
					st.blocked = runtimeWait(name)
				}
				continue
			}
			top = false
			switch {
			case inSyscall:
				st.blocked = "a system call"
			case parked && st.blocked == "":
				st.blocked = name
			}
		}
		if st.app == "" && isApplication(f) {
			st.app = name + " (" + f.File + ":" + strconv.Itoa(f.Line) + ")"
		}
		if st.own == "" && strings.HasPrefix(name, dwellModule+"/") {
			st.own = name
		}
	}
	if parked && st.blocked == "" {
		st.blocked = "the runtime"
	}
	st.text = b.String()
	return st
}

// runtimeWait names what a goroutine parked in the runtime function name waits for.
func runtimeWait(name string) string {
	switch name {
	case "runtime.chanrecv", "runtime.chanrecv1", "runtime.chanrecv2":
		return "a channel receive"
	case "runtime.chansend", "runtime.chansend1":
		return "a channel send"
	case "runtime.selectgo", "runtime.block":
		return "a select"
	case "runtime.semacquire1", "internal/sync.runtime_SemacquireMutex", "sync.runtime_SemacquireMutex":
		return "a lock"
	case "runtime.netpollblock", "internal/poll.runtime_pollWait":
		return "network I/O"
	}
	return ""
}

// isApplication reports whether f is application code: not the runtime's, the standard
// library's or dwell's own (dwell's tests and examples are applications).
func isApplication(f runtime.Frame) bool {
	name := f.Function
	if strings.HasPrefix(name, dwellModule+"/") {
		return strings.HasSuffix(f.File, "_test.go") || strings.HasPrefix(name, dwellModule+"/examples/")
	}
	first := name
	if i := strings.IndexByte(first, '/'); i >= 0 {
		first = first[:i]
	} else if i := strings.IndexByte(first, '.'); i >= 0 {
		first = first[:i]
	}
	return first == "main" || strings.Contains(first, ".") // the standard library's paths have no dot
}
