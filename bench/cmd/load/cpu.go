package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/proc"
)

// cpuResult is what cpu prints.
type cpuResult struct {
	Mode string `json:"mode"`
	PID  int    `json:"pid"`
	// CPUns is the server's CPU time so far, or, with a command, the CPU time it used while the
	// command ran.
	CPUns int64 `json:"cpu_ns"`
	RSS   int64 `json:"rss_bytes"`
	// Seconds is how long the command ran (0 without one).
	Seconds float64 `json:"seconds,omitempty"`
}

// runCPU reads the server's CPU time. With a command after --, it runs the command (a wrk run,
// say) with its output passed through and reports the server CPU used meanwhile, so that
// dividing by the requests the command reports gives CPU per request.
func runCPU(ctx context.Context, args []string) (any, error) {
	var pid int
	fs := flag.NewFlagSet("cpu", flag.ExitOnError)
	fs.IntVar(&pid, "pid", 0, "server process id")
	fs.Parse(args)
	if pid == 0 {
		return nil, fmt.Errorf("-pid is required")
	}
	before, err := proc.CPU(pid)
	if err != nil {
		return nil, err
	}
	res := &cpuResult{Mode: "cpu", PID: pid, CPUns: before}
	if argv := fs.Args(); len(argv) > 0 {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		t0 := time.Now()
		err := cmd.Run()
		res.Seconds = time.Since(t0).Seconds()
		if err != nil {
			return nil, err
		}
		after, err := proc.CPU(pid)
		if err != nil {
			return nil, err
		}
		res.CPUns = after - before
	}
	res.RSS, _ = proc.RSS(pid)
	return res, nil
}
