package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/proc"
	"github.com/dwellhttp/dwell/bench/internal/wspeer"
)

// The WebSocket modes, against the routes of package wspeer:
//
//	load ws-idle  -addr A -pid P -path /echo -n 5000 -at 1000,5000 [-deflate]
//	load ws-echo  -addr A -pid P -path /echo -c 50 -warm 1s -d 4s -size 1024 [-deflate]
//	load ws-bcast -addr A -pid P -n 5000 -ticks 50 -interval 100ms -size 128 [-stalled 1000]

// wsIdleResult is what ws-idle prints: idle's checkpoints, the server's RSS before the first
// connection, and the extension the server agreed to.
type wsIdleResult struct {
	holdResult
	RSS0      int64  `json:"rss0_bytes"`
	Extension string `json:"extension,omitempty"`
}

// runWSIdle holds upgraded connections that have each echoed one message (with -deflate, a
// compressed JSON text), and reads the server's RSS before the first and at each checkpoint.
func runWSIdle(ctx context.Context, args []string) (any, error) {
	var h holdFlags
	var deflate bool
	var size int
	fs := flag.NewFlagSet("ws-idle", flag.ExitOnError)
	h.register(fs, "/echo")
	fs.BoolVar(&deflate, "deflate", false, "offer permessage-deflate and echo a compressed JSON text")
	fs.IntVar(&size, "size", 1024, "bytes of the message each connection echoes once")
	fs.Parse(args)
	if h.pid == 0 {
		return nil, fmt.Errorf("-pid is required: the figure is the server's memory")
	}
	res := &wsIdleResult{holdResult: holdResult{Mode: "ws-idle", Path: h.path}}
	settle(ctx, h.pid)
	rss0, err := proc.RSS(h.pid)
	if err != nil {
		return nil, err
	}
	res.RSS0 = rss0
	msg := newMessage(size, deflate)
	var ext sync.Once
	conns, err := hold(ctx, &h, &res.holdResult, func(c *held) error {
		c.c.SetDeadline(time.Now().Add(10 * time.Second))
		defer c.c.SetDeadline(time.Time{})
		w := &wsDialed{c: c.c, br: c.br}
		if err := w.upgrade(h.addr, h.path, deflate); err != nil {
			return err
		}
		ext.Do(func() { res.Extension = w.extension })
		if _, err := c.c.Write(msg.frame); err != nil {
			return err
		}
		f, p, err := readMessage(c.br)
		if err != nil {
			return err
		}
		return msg.check(f, p, true)
	})
	closeAll(conns)
	return res, err
}

// wsEchoResult is what ws-echo prints. Latencies are in microseconds.
type wsEchoResult struct {
	Mode       string  `json:"mode"`
	Path       string  `json:"path"`
	Conns      int     `json:"conns"`
	Size       int     `json:"size"`
	Seconds    float64 `json:"seconds"`
	Messages   int     `json:"messages"`
	MsgPerSec  float64 `json:"msg_per_sec"`
	CPUns      int64   `json:"cpu_ns"`
	CPUusPerMs float64 `json:"cpu_us_per_msg"`
	OtherPct   float64 `json:"other_pct"`
	// ClientPct is the load tool's own CPU time over the run, in percent of the run: near 100
	// would mean the client, not the server, set the pace.
	ClientPct float64 `json:"client_pct"`
	P50us     float64 `json:"p50_us"`
	P99us     float64 `json:"p99_us"`
	P999us    float64 `json:"p999_us"`
	Extension string  `json:"extension,omitempty"`
}

// runWSEcho runs a closed loop on c connections: each sends its message and sends it again as
// soon as the echo is in. After the warm-up, for d, it counts the echoes, keeps every round
// trip and reads the server's CPU time at both ends.
func runWSEcho(ctx context.Context, args []string) (any, error) {
	var (
		cf          common
		conns, size int
		dur, warm   time.Duration
		deflate     bool
		serverCPU   int
	)
	fs := flag.NewFlagSet("ws-echo", flag.ExitOnError)
	cf.register(fs, "/echo")
	fs.IntVar(&conns, "c", 50, "connections")
	fs.DurationVar(&warm, "warm", time.Second, "warm-up before the measurement, same load")
	fs.DurationVar(&dur, "d", 4*time.Second, "measurement")
	fs.IntVar(&size, "size", 1024, "message bytes (uncompressed)")
	fs.BoolVar(&deflate, "deflate", false, "offer permessage-deflate and echo a compressed JSON text")
	fs.IntVar(&serverCPU, "server-cpu", 0, "the server's CPU, for the noise figure")
	fs.Parse(args)
	if cf.pid == 0 || conns <= 0 || dur <= 0 {
		return nil, fmt.Errorf("-pid, -c and -d are required")
	}
	msg := newMessage(size, deflate)
	d, err := newDialer(cf.addr, conns)
	if err != nil {
		return nil, err
	}
	cs, ext, err := dialAll(ctx, d, cf.addr, cf.path, conns, deflate, nil)
	if err != nil {
		return nil, err
	}
	var (
		lats              = make([]time.Duration, 0, 1<<20)
		counting, sending = false, true
		inFlight          = 0
	)
	var p *poller
	p, err = newPoller(func(c *pconn, op byte, rsv1 bool, payload []byte, now int64) error {
		// Every plain echo is compared whole; of compressed ones, the first and every 64th
		// are inflated, the others checked by type alone, to keep the client's core free.
		if err := msg.check(serverFrame{fin: true, op: op, rsv1: rsv1}, payload, c.frames%64 == 1); err != nil {
			return err
		}
		if counting {
			lats = append(lats, time.Duration(now-c.sentAt))
		}
		if !sending {
			inFlight--
			return nil
		}
		c.sentAt = now
		p.send(c, msg.frame)
		return nil
	})
	if err != nil {
		closeFds(cs)
		return nil, err
	}
	defer p.close()
	for _, c := range cs {
		p.add(c, true)
	}
	now := time.Now()
	for _, c := range p.conns {
		c.sentAt = now.UnixNano()
		p.send(c, msg.frame)
	}
	var (
		startAt, endAt = now.Add(warm).UnixNano(), now.Add(warm + dur).UnixNano()
		cpu0, cpu1     int64
		busy0, busy1   int64
		self0, self1   int64
		t0, t1         int64
		measureErr     error
		phase          = 0 // warm-up, measuring, draining
		drainBy        int64
		hardEnd        = now.Add(warm + dur + 5*time.Second)
		mark           = func() (int64, int64) {
			c, err := proc.CPU(cf.pid)
			b, _ := proc.CPUBusyTasks(serverCPU)
			measureErr = errors.Join(measureErr, err)
			return c, b
		}
	)
	err = p.run(hardEnd, func(now int64) bool {
		if p.firstErr != nil || p.dropped > 0 {
			return true
		}
		switch {
		case phase == 0 && now >= startAt:
			cpu0, busy0 = mark()
			self0 = selfCPU()
			t0, counting, phase = now, true, 1
		case phase == 1 && now >= endAt:
			cpu1, busy1 = mark()
			self1 = selfCPU()
			t1, counting, sending, phase = now, false, false, 2
			inFlight, drainBy = conns, now+int64(time.Second)
		case phase == 2:
			return inFlight == 0 || now >= drainBy
		}
		return ctx.Err() != nil
	})
	err = errors.Join(err, measureErr, p.firstErr, ctx.Err())
	if err == nil && p.dropped > 0 {
		err = fmt.Errorf("%d of %d connections closed during the run", p.dropped, conns)
	}
	if err == nil && phase < 2 {
		err = errors.New("the run ended before its measurement did")
	}
	if err != nil {
		return nil, err
	}
	slices.Sort(lats)
	secs := float64(t1-t0) / 1e9
	res := &wsEchoResult{
		Mode: "ws-echo", Path: cf.path, Conns: conns, Size: size, Seconds: secs,
		Messages: len(lats), MsgPerSec: float64(len(lats)) / secs, CPUns: cpu1 - cpu0,
		OtherPct:  max(0, float64(busy1-busy0-(cpu1-cpu0))/float64(t1-t0)*100),
		ClientPct: float64(self1-self0) / float64(t1-t0) * 100,
		P50us:     quantile(lats, 0.50), P99us: quantile(lats, 0.99), P999us: quantile(lats, 0.999),
		Extension: ext,
	}
	if len(lats) == 0 {
		return nil, errors.New("no echo came back")
	}
	res.CPUusPerMs = float64(res.CPUns) / 1e3 / float64(len(lats))
	logf("ws-echo: %d messages over %d connections, %.0f msg/s, %.2f µs server CPU each, p50 %.0f µs, p99 %.0f µs, client CPU %.0f%%",
		res.Messages, conns, res.MsgPerSec, res.CPUusPerMs, res.P50us, res.P99us, res.ClientPct)
	return res, nil
}

// dialAll opens n upgraded connections, 32 at a time, and takes each from package net (see
// detach). rcvbuf, when not nil, gives the receive buffer of connection i (0: the default).
// It returns the extension the first connection's server agreed to.
func dialAll(ctx context.Context, d *dialer, host, path string, n int, deflate bool, rcvbuf func(int) int) ([]*pconn, string, error) {
	out := make([]*pconn, n)
	var (
		next  atomic.Int64
		mu    sync.Mutex
		first error
		ext   string
		wg    sync.WaitGroup
	)
	for range min(32, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				buf := 0
				if rcvbuf != nil {
					buf = rcvbuf(i)
				}
				w, err := wsDial(d, host, path, deflate, buf)
				var fd int
				var rest []byte
				if err == nil {
					fd, rest, err = w.detach()
				}
				mu.Lock()
				if err != nil {
					if first == nil {
						first = fmt.Errorf("connection %d: %w", i, err)
					}
					next.Store(int64(n)) // stop the others
				} else {
					out[i] = &pconn{fd: fd, in: rest}
					if i == 0 {
						ext = w.extension
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	if first != nil {
		closeFds(out)
		return nil, "", first
	}
	return out, ext, nil
}

// selfCPU returns the load tool's own CPU time so far, in nanoseconds.
func selfCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func closeFds(cs []*pconn) {
	for _, c := range cs {
		if c != nil {
			closeFd(c.fd)
		}
	}
}

// startBroadcast asks the server to start its broadcast (wspeer's GET /start).
func startBroadcast(addr, path string, p wspeer.Plan) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	target := path + "?ticks=" + strconv.Itoa(p.Ticks) + "&interval=" + p.Interval.String() + "&size=" + strconv.Itoa(p.Size)
	_, err = exchange(c, bufio.NewReader(c), request("GET", target, addr, -1), "ok")
	return err
}
