package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/proc"
	"github.com/dwellhttp/dwell/bench/internal/wspeer"
)

// wsBcastResult is what ws-bcast prints. Delays are in microseconds, from the time the server
// stamped in a message to the client's read of it; readers are the clients that read.
type wsBcastResult struct {
	Mode     string `json:"mode"`
	Conns    int    `json:"conns"`
	Readers  int    `json:"readers"`
	Stalled  int    `json:"stalled"`
	Ticks    int    `json:"ticks"`
	Size     int    `json:"size"`
	Interval string `json:"interval"`
	// Expected is Readers × Ticks; Delivered what the readers received; Gaps the ticks they
	// missed (a message the server dropped); ReadersClosed readers the server closed.
	Expected      int     `json:"expected"`
	Delivered     int     `json:"delivered"`
	DeliveredFrac float64 `json:"delivered_frac"`
	Gaps          int     `json:"gaps"`
	ReadersClosed int     `json:"readers_closed"`
	P50us         float64 `json:"p50_us"`
	P99us         float64 `json:"p99_us"`
	MaxUs         float64 `json:"max_us"`
	// CPUns is the server's CPU time from the start request to the last delivery; per frame,
	// over the frames delivered to readers.
	CPUns          int64   `json:"cpu_ns"`
	CPUusPerFrame  float64 `json:"cpu_us_per_frame"`
	OtherPct       float64 `json:"other_pct"`
	ClientPct      float64 `json:"client_pct"`
	RSSBefore      int64   `json:"rss_before_bytes"`
	RSSPeakGrowth  int64   `json:"rss_peak_growth_bytes"`
	StalledClosed  int     `json:"stalled_closed"`
	StalledFrames  int     `json:"stalled_frames"`
	StalledFrac    float64 `json:"stalled_frac"`
	BroadcastMs    float64 `json:"broadcast_ms"`
	FirstErrorText string  `json:"first_error,omitempty"`
}

// runWSBcast connects n clients to the broadcast, stalled of them never reading (with a small
// receive buffer, so that the server's output for them waits in the server soon), has the
// server broadcast ticks messages of size bytes every interval, and measures what the readers
// receive: every tick, in order, and its delay. It samples the server's RSS every 10 ms for
// its peak growth. Once the broadcast is over, the stalled clients read what reaches them, to
// tell those the server closed (its slow-client policy) from those it kept.
func runWSBcast(ctx context.Context, args []string) (any, error) {
	var (
		cf                  common
		n, stalled, rcvbuf  int
		serverCPU           int
		plan                wspeer.Plan
		startPath, interval string
	)
	fs := flag.NewFlagSet("ws-bcast", flag.ExitOnError)
	cf.register(fs, "/broadcast")
	fs.IntVar(&n, "n", 5000, "clients")
	fs.IntVar(&stalled, "stalled", 0, "clients, spread among the n, that never read")
	fs.IntVar(&rcvbuf, "rcvbuf", 4096, "SO_RCVBUF of the stalled clients")
	fs.IntVar(&plan.Ticks, "ticks", 50, "messages broadcast")
	fs.StringVar(&interval, "interval", "100ms", "time between messages")
	fs.IntVar(&plan.Size, "size", 128, "message bytes")
	fs.StringVar(&startPath, "start-path", "/start", "path that starts the broadcast")
	fs.IntVar(&serverCPU, "server-cpu", 0, "the server's CPU, for the noise figure")
	fs.Parse(args)
	var err error
	if plan.Interval, err = time.ParseDuration(interval); err != nil {
		return nil, err
	}
	if cf.pid == 0 || n <= 0 || stalled < 0 || stalled >= n || plan.Size < wspeer.HeaderSize {
		return nil, fmt.Errorf("-pid is required, -stalled must be under -n, -size at least %d", wspeer.HeaderSize)
	}
	isStalled := func(i int) bool { return stalled > 0 && i*stalled/n != (i+1)*stalled/n }
	d, err := newDialer(cf.addr, n)
	if err != nil {
		return nil, err
	}
	cs, _, err := dialAll(ctx, d, cf.addr, cf.path, n, false, func(i int) int {
		if isStalled(i) {
			return rcvbuf
		}
		return 0
	})
	if err != nil {
		return nil, err
	}
	res := &wsBcastResult{Mode: "ws-bcast", Conns: n, Stalled: stalled, Readers: n - stalled, Ticks: plan.Ticks,
		Size: plan.Size, Interval: plan.Interval.String()}
	res.Expected = res.Readers * plan.Ticks
	var (
		delays   = make([]time.Duration, 0, res.Expected)
		finished int
		lastAt   int64
	)
	p, err := newPoller(func(c *pconn, op byte, _ bool, payload []byte, now int64) error {
		tick, sent, ok := wspeer.Stamp(payload)
		if op != opBinary || !ok || len(payload) != plan.Size {
			return fmt.Errorf("ws: broadcast message of opcode %d, %d bytes", op, len(payload))
		}
		if tick < c.next || tick >= uint64(plan.Ticks) {
			return fmt.Errorf("ws: tick %d after %d", tick, c.next)
		}
		c.gaps += int(tick - c.next)
		c.next = tick + 1
		if c.stalled {
			res.StalledFrames++
			return nil
		}
		delays = append(delays, time.Duration(now-sent))
		lastAt = now
		if c.next == uint64(plan.Ticks) {
			finished++
		}
		return nil
	})
	if err != nil {
		closeFds(cs)
		return nil, err
	}
	defer p.close()
	for i, c := range cs {
		c.stalled = isStalled(i)
		if err := p.add(c, !c.stalled); err != nil {
			return nil, err
		}
	}
	settle(ctx, cf.pid)
	tree, err := proc.Tree(cf.pid)
	if err != nil {
		return nil, err
	}
	if res.RSSBefore, err = proc.RSSOf(tree); err != nil {
		return nil, err
	}
	var peak atomic.Int64
	peak.Store(res.RSSBefore)
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if v, err := proc.RSSOf(tree); err == nil && v > peak.Load() {
					peak.Store(v)
				}
			}
		}
	}()
	cpu0, err := proc.CPU(cf.pid)
	if err != nil {
		return nil, err
	}
	busy0, _ := proc.CPUBusyTasks(serverCPU)
	self0 := selfCPU()
	t0 := time.Now()
	if err := startBroadcast(cf.addr, startPath, plan); err != nil {
		close(stop)
		return nil, fmt.Errorf("start: %w", err)
	}
	deadline := t0.Add(time.Duration(plan.Ticks)*plan.Interval + 5*time.Second)
	err = p.run(deadline, func(int64) bool {
		return finished+p.dropped >= res.Readers || p.firstErr != nil || ctx.Err() != nil
	})
	cpu1, cerr := proc.CPU(cf.pid)
	busy1, _ := proc.CPUBusyTasks(serverCPU)
	elapsed := time.Since(t0)
	res.ClientPct = float64(selfCPU()-self0) / float64(elapsed) * 100
	close(stop)
	<-sampled
	if err = errors.Join(err, cerr, ctx.Err()); err != nil {
		return nil, err
	}
	res.RSSPeakGrowth = peak.Load() - res.RSSBefore
	res.ReadersClosed = p.dropped
	for _, c := range p.conns {
		if !c.stalled {
			res.Gaps += c.gaps
		}
	}
	res.Delivered = len(delays)
	res.DeliveredFrac = float64(res.Delivered) / float64(res.Expected)
	res.CPUns = cpu1 - cpu0
	if res.Delivered > 0 {
		res.CPUusPerFrame = float64(res.CPUns) / 1e3 / float64(res.Delivered)
		res.BroadcastMs = float64(lastAt-t0.UnixNano()) / 1e6
	}
	res.OtherPct = max(0, float64(busy1-busy0-res.CPUns)/float64(elapsed)*100)
	slices.Sort(delays)
	res.P50us, res.P99us = quantile(delays, 0.50), quantile(delays, 0.99)
	if len(delays) > 0 {
		res.MaxUs = float64(delays[len(delays)-1]) / 1e3
	}
	if p.firstErr != nil {
		res.FirstErrorText = p.firstErr.Error()
	}
	if stalled > 0 {
		drainStalled(p, res)
	}
	logf("ws-bcast: %d of %d delivered to %d readers (%d gaps, %d closed), p50 %.0f µs, p99 %.0f µs, %.2f µs server CPU per frame, RSS +%.1f MiB; stalled: %d closed, %d frames",
		res.Delivered, res.Expected, res.Readers, res.Gaps, res.ReadersClosed, res.P50us, res.P99us,
		res.CPUusPerFrame, float64(res.RSSPeakGrowth)/(1<<20), res.StalledClosed, res.StalledFrames)
	if p.firstErr != nil {
		return res, p.firstErr
	}
	return res, nil
}

// drainStalled has the stalled clients read, once the broadcast is over, until nothing more
// comes for 300 ms (or 5 s have passed), and counts those the server had closed.
func drainStalled(p *poller, res *wsBcastResult) {
	before := p.serverClosed
	for _, c := range p.conns {
		if c.stalled {
			p.poll(c)
		}
	}
	reads, quietSince := p.reads, time.Now().UnixNano()
	p.run(time.Now().Add(5*time.Second), func(now int64) bool {
		if p.reads != reads {
			reads, quietSince = p.reads, now
		}
		return now-quietSince > int64(300*time.Millisecond)
	})
	res.StalledClosed = p.serverClosed - before
	res.StalledFrac = float64(res.StalledFrames) / float64(res.Stalled*res.Ticks)
}
