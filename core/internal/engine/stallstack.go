package engine

import (
	"bufio"
	"bytes"
	"context"
	"reflect"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
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

// LabelGoroutine gives the calling goroutine, a loop's, the profiler label that names that
// loop's goroutines; the goroutines and coroutines it starts inherit it.
func LabelGoroutine(label string) {
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(labelKey, label)))
}

// A LoopStack is what the watchdog read of a stalled loop's code.
type LoopStack struct {
	Taken   bool
	Text    string // the goroutine's frames, as a traceback prints them
	App     string // the innermost frame of application code, "function (file:line)"; "" if none
	Own     string // the innermost frame of dwell's own code, when there is no application frame
	Blocked string // what the code waits in, when it is parked or in a system call; "" if running
}

// Where dwell's own code is, and the frames that tell a loop's goroutine parked where the loop
// parks it: waiting in its poll, or switched away from (a coroutine's yield, the loop waiting
// for the coroutine it runs).
var (
	dwellModule  = strings.TrimSuffix(FuncPkg(reflect.ValueOf(LabelGoroutine).Pointer()), "/core/internal/engine")
	switchedAway = "runtime.coroswitch"
	polling      = "/core/internal/netpoll.(*Poller).Wait"
)

// FuncPkg returns the package path of the function at pc.
func FuncPkg(pc uintptr) string {
	name := runtime.FuncForPC(pc).Name()
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		return name[:slash+1+dot]
	}
	return name
}

// A Profile is the goroutine profile, read once for the stacks of every stalled loop.
type Profile struct {
	groups []*profileGroup
	frames []string // the functions a loop's goroutine runs its code in (ReadProfile)
}

// ReadProfile reads the goroutine profile. loopFrames are the functions, by full name, in which
// a loop's goroutines run the loop's code: the loop's own, its coroutines'.
func ReadProfile(loopFrames []string) (*Profile, error) {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return nil, err
	}
	return &Profile{groups: profileGroups(buf.Bytes()), frames: loopFrames}, nil
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
func (g *profileGroup) runsLoopCode(loopFrames []string) bool {
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

// LoopStack finds the goroutine running the code of the loop labelled label and reads its
// stack. A handler that replaced its goroutine's labels (pprof.Do) leaves its coroutine
// unlabelled: then the one unlabelled goroutine running a loop's code is taken, if there is
// only one.
func (p *Profile) LoopStack(label string) LoopStack {
	var found, unlabelled *profileGroup
	others := 0
	for _, g := range p.groups {
		switch {
		case g.label == label && g.runsLoopCode(p.frames):
			found = g
		case g.label == "" && g.runsLoopCode(p.frames):
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
		return LoopStack{}
	}
	return readStack(found.symbolized())
}

// readStack tells from a stalled goroutine's frames where it is: the innermost frame of
// application code, what it waits in if it does not run, and the text of the whole.
func readStack(frames []runtime.Frame) LoopStack {
	st := LoopStack{Taken: true}
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
				if parked && st.Blocked == "" {
					st.Blocked = runtimeWait(name)
				}
				continue
			}
			top = false
			switch {
			case inSyscall:
				st.Blocked = "a system call"
			case parked && st.Blocked == "":
				st.Blocked = name
			}
		}
		if st.App == "" && isApplication(f) {
			st.App = name + " (" + f.File + ":" + strconv.Itoa(f.Line) + ")"
		}
		if st.Own == "" && strings.HasPrefix(name, dwellModule+"/") {
			st.Own = name
		}
	}
	if parked && st.Blocked == "" {
		st.Blocked = "the runtime"
	}
	st.Text = b.String()
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
