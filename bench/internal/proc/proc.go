// Package proc reads what the benchmarks measure about a server process from /proc: its resident
// memory and the CPU time it has used, summed over the process and its descendants, because nginx
// serves from a worker forked by its master and a figure must count the worker.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Tree returns pid followed by all its descendants. It scans /proc once; a process that starts or
// exits during the scan may be missed, which the callers tolerate because servers fork only at
// start-up.
func Tree(pid int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		pp, err := parentOf(p)
		if err != nil {
			continue
		}
		children[pp] = append(children[pp], p)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		return nil, err
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out, nil
}

// parentOf reads the ppid field of /proc/PID/stat. The command name (field 2) may hold spaces and
// parentheses, so parsing starts after the last ')'.
func parentOf(pid int) (int, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(f[1])
}

// statFields returns the fields of /proc/PID/stat after the command name: index 0 is the state
// (field 3 in proc(5)), so field N of proc(5) is index N-3.
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, fmt.Errorf("proc: malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return nil, fmt.Errorf("proc: short /proc/%d/stat", pid)
	}
	return f, nil
}

// statusKiB reads one "Name:   N kB" line of /proc/PID/status.
func statusKiB(pid int, name string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, name+":")
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
		return strconv.ParseInt(num, 10, 64)
	}
	return 0, fmt.Errorf("proc: no %s in /proc/%d/status", name, pid)
}

// RSS returns the resident set size in bytes of pid and its descendants (VmRSS summed). Pages
// shared between an nginx master and its worker are counted twice; the figures use differences
// between two readings, in which they cancel.
func RSS(pid int) (int64, error) {
	return sumStatus(pid, "VmRSS")
}

// RSSOf is RSS for a tree already listed by Tree: a sampler polling every few milliseconds
// should not rescan all of /proc each time.
func RSSOf(pids []int) (int64, error) {
	return sumStatusOf(pids, "VmRSS")
}

func sumStatus(pid int, name string) (int64, error) {
	pids, err := Tree(pid)
	if err != nil {
		return 0, err
	}
	return sumStatusOf(pids, name)
}

func sumStatusOf(pids []int, name string) (int64, error) {
	var total int64
	for i, p := range pids {
		kib, err := statusKiB(p, name)
		if err != nil {
			if i == 0 {
				return 0, err
			}
			continue // a descendant that just exited
		}
		total += kib * 1024
	}
	return total, nil
}

// CPU returns the CPU time in nanoseconds that pid and its descendants have used so far, from
// each thread's /proc/PID/task/TID/schedstat (nanosecond resolution, where /proc/PID/stat counts
// 10 ms ticks). Threads that already exited are not counted; when schedstat is missing the
// function falls back to utime+stime from /proc/PID/stat, which does count them.
func CPU(pid int) (int64, error) {
	pids, err := Tree(pid)
	if err != nil {
		return 0, err
	}
	var total int64
	for i, p := range pids {
		ns, err := processCPU(p)
		if err != nil {
			if i == 0 {
				return 0, err
			}
			continue
		}
		total += ns
	}
	return total, nil
}

func processCPU(pid int) (int64, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return ticksCPU(pid)
	}
	var total int64
	read := 0
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		first, _, _ := strings.Cut(string(b), " ")
		ns, err := strconv.ParseInt(first, 10, 64)
		if err != nil {
			return ticksCPU(pid)
		}
		total += ns
		read++
	}
	if read == 0 {
		return ticksCPU(pid)
	}
	return total, nil
}

// CPUBusy returns how long CPU n has been busy since boot (user, nice, system, irq, softirq and
// steal time from /proc/stat), in nanoseconds at 10 ms resolution. Compared with a server's own
// CPU time over a run, it shows how much of the server's core something else took.
func CPUBusy(n int) (int64, error) {
	return cpuBusy(n, []int{0, 1, 2, 5, 6, 7}) // user nice system (idle iowait) irq softirq steal
}

// CPUBusyTasks is CPUBusy without the time spent in interrupts (irq, softirq): what tasks ran
// on CPU n. A server's own sends cost its core softirq time that its threads are not charged
// with (on loopback the receiving socket's processing runs there, about 3 µs a message on the
// machine the figures come from); left out, what remains over the server's CPU time is other
// processes.
func CPUBusyTasks(n int) (int64, error) {
	return cpuBusy(n, []int{0, 1, 2, 7}) // user nice system steal
}

func cpuBusy(n int, fields []int) (int64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	prefix := fmt.Sprintf("cpu%d ", n)
	for line := range strings.SplitSeq(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 8 {
			return 0, fmt.Errorf("proc: short %q line in /proc/stat", prefix)
		}
		var busy int64
		for _, i := range fields {
			v, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				return 0, err
			}
			busy += v
		}
		return busy * (1e9 / clockTicks), nil
	}
	return 0, fmt.Errorf("proc: no cpu%d in /proc/stat", n)
}

// clockTicks is USER_HZ. Linux has reported 100 on every architecture Go supports since 2.6,
// whatever CONFIG_HZ is, and Go offers no sysconf without cgo.
const clockTicks = 100

// ticksCPU returns utime+stime of /proc/PID/stat in nanoseconds.
func ticksCPU(pid int) (int64, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return (utime + stime) * (1e9 / clockTicks), nil
}

// RaiseNofile lifts the soft RLIMIT_NOFILE to the hard limit and, when running as root, both to
// at least want. Calling setrlimit explicitly also makes Go pass the raised limit on to the
// processes this one starts (it otherwise restores the original soft limit in children).
func RaiseNofile(want uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Max < want && os.Geteuid() == 0 {
		lim.Max = want
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		// Keep going with the old hard limit, which an unprivileged user can always reach.
		if err2 := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err2 != nil {
			return 0, err2
		}
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return 0, os.NewSyscallError("setrlimit", err)
		}
	}
	return lim.Cur, nil
}
