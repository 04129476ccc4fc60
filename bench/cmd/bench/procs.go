package main

import (
	"context"
	"errors"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// procs tracks every process the driver starts, by pid, so that a normal end, an error and an
// interrupt all stop them. Each runs in its own process group whose id is its pid: signalling
// the group reaches an nginx worker or a server the load tool started, and nothing else.
type procs struct {
	mu sync.Mutex
	m  map[int]*tracked
}

type tracked struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func newProcs() *procs {
	return &procs{m: map[int]*tracked{}}
}

// start starts cmd in a new process group and tracks it until stop.
func (p *procs) start(cmd *exec.Cmd) (*tracked, error) {
	// Pdeathsig is a backstop for a driver killed with SIGKILL, which runs no cleanup.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	t := &tracked{cmd: cmd, done: make(chan struct{})}
	go func() {
		t.err = cmd.Wait()
		close(t.done)
	}()
	p.mu.Lock()
	p.m[cmd.Process.Pid] = t
	p.mu.Unlock()
	return t, nil
}

// run starts cmd, waits for it to exit and stops it early if ctx ends.
func (p *procs) run(ctx context.Context, cmd *exec.Cmd) error {
	t, err := p.start(cmd)
	if err != nil {
		return err
	}
	select {
	case <-t.done:
		p.forget(t)
		return t.err
	case <-ctx.Done():
		p.stop(t)
		return ctx.Err()
	}
}

func (p *procs) forget(t *tracked) {
	p.mu.Lock()
	delete(p.m, t.cmd.Process.Pid)
	p.mu.Unlock()
}

// stop sends SIGTERM to t's process group, gives the group 3 s to exit (the load tool uses them
// to stop a server it started), then sends SIGKILL.
func (p *procs) stop(t *tracked) {
	pid := t.cmd.Process.Pid
	syscall.Kill(-pid, syscall.SIGTERM)
	deadline := time.Now().Add(3 * time.Second)
	for {
		select {
		case <-t.done:
			if !groupAlive(pid) {
				p.forget(t)
				return
			}
		default:
		}
		if time.Now().After(deadline) {
			syscall.Kill(-pid, syscall.SIGKILL)
			<-t.done
			p.forget(t)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// groupAlive reports whether any process of the group still exists.
func groupAlive(pgid int) bool {
	return !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// stopAll stops every process still tracked.
func (p *procs) stopAll() {
	p.mu.Lock()
	all := make([]*tracked, 0, len(p.m))
	for _, t := range p.m {
		all = append(all, t)
	}
	p.mu.Unlock()
	for _, t := range all {
		p.stop(t)
	}
}
