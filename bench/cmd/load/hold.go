package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/proc"
)

// held is one connection kept open by idle or park.
type held struct {
	c  net.Conn
	br *bufio.Reader
}

// checkpoint is the server's resident memory with a number of connections held.
type checkpoint struct {
	Conns int   `json:"conns"`
	RSS   int64 `json:"rss_bytes"`
}

// holdResult is what idle and park print.
type holdResult struct {
	Mode        string       `json:"mode"`
	Path        string       `json:"path"`
	Conns       int          `json:"conns"`
	Checkpoints []checkpoint `json:"checkpoints"`
	// BytesPerConn is the RSS growth between the first and the last checkpoint divided by the
	// connections added between them, so the server's fixed cost cancels out.
	BytesPerConn float64 `json:"bytes_per_conn"`
	// Released and ReleaseMS are park's: how many parked requests were answered after the
	// release, and how long after sending it the last answer arrived.
	Released  int     `json:"released,omitempty"`
	ReleaseMS float64 `json:"release_ms,omitempty"`
	// Negotiated is what the first connection's TLS handshake agreed on, with -tls.
	Negotiated string `json:"negotiated,omitempty"`
}

// holdFlags are the flags idle and park share.
type holdFlags struct {
	common
	n        int
	at       string
	parallel int
	tls      tlsFlags
}

func (h *holdFlags) register(fs *flag.FlagSet, path string) {
	h.common.register(fs, path)
	h.tls.register(fs, true)
	fs.IntVar(&h.n, "n", 5000, "connections to hold")
	fs.StringVar(&h.at, "at", "1000,5000", "connection counts at which to read the server's RSS")
	fs.IntVar(&h.parallel, "parallel", 32, "connections opened at a time")
}

// hold opens connections up to each checkpoint, calling prepare on every new one, then waits
// for the server to go quiet and reads its RSS. It returns the open connections, which the
// caller closes.
func hold(ctx context.Context, h *holdFlags, res *holdResult, prepare func(*held) error) ([]*held, error) {
	points, err := checkpoints(h.at, h.n)
	if err != nil {
		return nil, err
	}
	if h.pid == 0 {
		return nil, fmt.Errorf("-pid is required: the figure is the server's memory")
	}
	d, err := newDialer(h.addr, h.n)
	if err != nil {
		return nil, err
	}
	conns := make([]*held, 0, h.n)
	for _, p := range points {
		more, err := openMany(ctx, d, p-len(conns), h.parallel, prepare)
		conns = append(conns, more...)
		if err != nil {
			return conns, err
		}
		settle(ctx, h.pid)
		rss, err := proc.RSS(h.pid)
		if err != nil {
			return conns, err
		}
		res.Checkpoints = append(res.Checkpoints, checkpoint{Conns: len(conns), RSS: rss})
		logf("%s: %d connections, server RSS %.1f MiB", res.Mode, len(conns), float64(rss)/(1<<20))
	}
	res.Conns = len(conns)
	if len(res.Checkpoints) > 1 {
		first, last := res.Checkpoints[0], res.Checkpoints[len(res.Checkpoints)-1]
		res.BytesPerConn = float64(last.RSS-first.RSS) / float64(last.Conns-first.Conns)
	}
	return conns, nil
}

// openMany opens n connections, parallel at a time, and prepares each. Any failure fails the
// whole run: a figure over fewer connections than it claims would be wrong.
func openMany(ctx context.Context, d *dialer, n, parallel int, prepare func(*held) error) ([]*held, error) {
	var (
		mu    sync.Mutex
		out   = make([]*held, 0, n)
		first error
		wg    sync.WaitGroup
		next  = make(chan struct{})
	)
	for range parallel {
		wg.Go(func() {
			for range next {
				c, err := d.dial()
				if err == nil {
					h := &held{c: c, br: bufio.NewReaderSize(c, 4096)}
					if err = prepare(h); err == nil {
						mu.Lock()
						out = append(out, h)
						mu.Unlock()
						continue
					}
					c.Close()
				}
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	for range n {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed || ctx.Err() != nil {
			break
		}
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return out, first
}

// settle waits until the server has stopped using CPU (under 1% over 50 ms, twice in a row) or
// 3 s have passed, so that a memory reading does not catch it half-way through a batch.
func settle(ctx context.Context, pid int) {
	deadline := time.Now().Add(3 * time.Second)
	const step = 50 * time.Millisecond
	prev, err := proc.CPU(pid)
	if err != nil {
		return
	}
	quiet := 0
	for quiet < 2 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(step)
		now, err := proc.CPU(pid)
		if err != nil {
			return
		}
		if now-prev < int64(step)/100 {
			quiet++
		} else {
			quiet = 0
		}
		prev = now
	}
}

func closeAll(conns []*held) {
	for _, h := range conns {
		h.c.Close()
	}
}

// runIdle holds keep-alive connections that have each completed one request, the state a
// browser's or a proxy's pooled connection spends most of its life in. With -tls each
// connection completes a full handshake first.
func runIdle(ctx context.Context, args []string) (any, error) {
	var h holdFlags
	fs := flag.NewFlagSet("idle", flag.ExitOnError)
	h.register(fs, "/hello")
	fs.Parse(args)
	res := &holdResult{Mode: "idle", Path: h.path}
	cfg, err := h.tls.config()
	if err != nil {
		return nil, err
	}
	host := h.addr
	var once sync.Once
	conns, err := hold(ctx, &h, res, func(c *held) error {
		c.c.SetDeadline(time.Now().Add(10 * time.Second))
		if err := secureHeld(c, cfg, &once, res); err != nil {
			return err
		}
		_, err := exchange(c.c, c.br, request("GET", h.path, host, -1), "")
		c.c.SetDeadline(time.Time{})
		return err
	})
	closeAll(conns)
	return res, err
}

// secureHeld runs the TLS handshake of a held connection when cfg is not nil, and notes what
// the first one negotiated.
func secureHeld(c *held, cfg *tls.Config, once *sync.Once, res *holdResult) error {
	if cfg == nil {
		return nil
	}
	neg, err := secure(c, cfg)
	if err == nil {
		once.Do(func() { res.Negotiated = neg })
	}
	return err
}
