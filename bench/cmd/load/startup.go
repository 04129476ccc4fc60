package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"
)

// startupResult is what startup prints.
type startupResult struct {
	Mode    string    `json:"mode"`
	Command []string  `json:"command"`
	Ms      []float64 `json:"ms"`
	// MedianMs is the median of Ms, the run's figure.
	MedianMs float64 `json:"median_ms"`
}

// runStartup starts the command n times and measures, each time, from just before exec to the
// first 200 answer to GET path. The command runs in its own process group, which is stopped
// (SIGTERM, then SIGKILL) after each measurement, so nginx's worker goes with its master.
func runStartup(ctx context.Context, args []string) (any, error) {
	var (
		cf common
		n  int
	)
	fs := flag.NewFlagSet("startup", flag.ExitOnError)
	cf.register(fs, "/hello")
	fs.IntVar(&n, "n", 5, "measurements")
	fs.Parse(args)
	argv := fs.Args()
	if len(argv) == 0 {
		return nil, fmt.Errorf("startup needs a command after --")
	}
	res := &startupResult{Mode: "startup", Command: argv}
	req := request("GET", cf.path, cf.addr, -1)
	for range n {
		if err := waitRefused(ctx, cf.addr); err != nil {
			return res, err
		}
		ms, err := startOnce(ctx, argv, cf.addr, req)
		if err != nil {
			return res, err
		}
		res.Ms = append(res.Ms, ms)
	}
	sorted := slices.Clone(res.Ms)
	slices.Sort(sorted)
	res.MedianMs = sorted[len(sorted)/2]
	logf("startup: %v ms, median %.1f ms", res.Ms, res.MedianMs)
	return res, nil
}

func startOnce(ctx context.Context, argv []string, addr string, req []byte) (float64, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = os.Stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	track(cmd)
	defer stopChild(cmd)
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	deadline := t0.Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return 0, fmt.Errorf("%s exited before answering", argv[0])
		case <-ctx.Done():
			return 0, ctx.Err()
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			// Connection refused comes back in microseconds; polling every 100 µs keeps the
			// measurement's resolution well under the figures' millisecond scale.
			time.Sleep(100 * time.Microsecond)
			continue
		}
		c.SetDeadline(time.Now().Add(2 * time.Second))
		_, err = exchange(c, bufio.NewReader(c), req, "")
		c.Close()
		if err == nil {
			return float64(time.Since(t0)) / float64(time.Millisecond), nil
		}
		time.Sleep(100 * time.Microsecond)
	}
	return 0, fmt.Errorf("%s did not answer within 10 s", argv[0])
}

// waitRefused waits until nothing listens on addr, so that one measurement's server has let go
// of the port before the next one binds it.
func waitRefused(ctx context.Context, addr string) error {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return nil
		}
		c.Close()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s still accepts connections", addr)
}

// children are the processes this tool started and has not yet stopped, so that an interrupt
// still stops them.
var children struct {
	sync.Mutex
	m map[int]*exec.Cmd
}

func track(cmd *exec.Cmd) {
	children.Lock()
	defer children.Unlock()
	if children.m == nil {
		children.m = map[int]*exec.Cmd{}
	}
	children.m[cmd.Process.Pid] = cmd
}

// stopChild sends SIGTERM to the child's process group (its id is the child's pid), waits up
// to 3 s for the group to be empty, then sends SIGKILL.
func stopChild(cmd *exec.Cmd) {
	pid := cmd.Process.Pid
	children.Lock()
	delete(children.m, pid)
	children.Unlock()
	syscall.Kill(-pid, syscall.SIGTERM)
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		if err := syscall.Kill(-pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	syscall.Kill(-pid, syscall.SIGKILL)
}

// stopChildren stops whatever is still running; main calls it on every exit path.
func stopChildren() {
	children.Lock()
	cmds := make([]*exec.Cmd, 0, len(children.m))
	for _, c := range children.m {
		cmds = append(cmds, c)
	}
	children.Unlock()
	for _, c := range cmds {
		stopChild(c)
	}
}
