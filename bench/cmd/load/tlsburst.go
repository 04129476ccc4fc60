package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/bench/internal/proc"
)

// tls-burst: many HTTPS clients connecting at once, as a crowd of long-poll clients does when a
// service comes back or a proxy in front reconnects.
//
//	load tls-burst -addr A -pid P -n 1000 -probes 4 -path /hello [-curves x25519|default] -cert FILE
//
// First -probes keep-alive connections are opened, one at a time, and each then asks for the
// path every 2 ms (the next request when the answer comes, if it took longer), so that the
// probes cost the client's core the same whatever the server; then -n goroutines, released together, each dial, complete a full
// handshake, send one GET and read the answer, keeping their connection open until all are
// done. The figures: the time from the release until the last client has its answer (and the
// median client's), the probes' latency while the crowd connects (p99: whether the open
// connections are still served meanwhile), and the server's CPU over the burst.

// probeInterval is how often each probe of tls-burst asks.
const probeInterval = 2 * time.Millisecond

// tlsBurstResult is what tls-burst prints.
type tlsBurstResult struct {
	Mode       string  `json:"mode"`
	N          int     `json:"n"`
	AllMs      float64 `json:"all_ms"`       // release to the last client's answer
	P50Ms      float64 `json:"p50_ms"`       // release to the median client's answer
	ProbeP99us float64 `json:"probe_p99_us"` // the probes' latency during the burst
	ProbeN     int     `json:"probe_requests"`
	CPUms      float64 `json:"cpu_ms"` // the server's CPU time from the release to the last answer
	Negotiated string  `json:"negotiated"`
}

func runTLSBurst(ctx context.Context, args []string) (any, error) {
	var (
		cf     common
		tf     tlsFlags
		n      int
		probes int
	)
	fs := flag.NewFlagSet("tls-burst", flag.ExitOnError)
	cf.register(fs, "/hello")
	tf.register(fs, false)
	fs.IntVar(&n, "n", 1000, "clients connecting at once")
	fs.IntVar(&probes, "probes", 4, "keep-alive connections opened first, asking all through the burst")
	fs.Parse(args)
	if cf.pid == 0 || n <= 0 {
		return nil, errors.New("-pid and -n are required")
	}
	cfg, err := tf.config()
	if err != nil {
		return nil, err
	}
	d := &dialer{addr: cf.addr, timeout: 30 * time.Second}
	req := request("GET", cf.path, cf.addr, -1)

	// The probes, connected before the crowd.
	var (
		probeMu  sync.Mutex
		probeLat []time.Duration
		stopProb atomic.Bool
		probing  sync.WaitGroup
		probeErr error
	)
	for range probes {
		c, br, err := burstConnect(ctx, d, cfg, req)
		if err != nil {
			return nil, fmt.Errorf("probe: %w", err)
		}
		defer c.Close()
		probing.Go(func() {
			var mine []time.Duration
			tick := time.NewTicker(probeInterval)
			defer tick.Stop()
			for !stopProb.Load() && ctx.Err() == nil {
				<-tick.C
				t0 := time.Now()
				c.SetDeadline(t0.Add(30 * time.Second))
				if _, err := exchange(c, br, req, peer.Hello); err != nil {
					probeMu.Lock()
					probeErr = err
					probeMu.Unlock()
					return
				}
				mine = append(mine, time.Since(t0))
			}
			probeMu.Lock()
			probeLat = append(probeLat, mine...)
			probeMu.Unlock()
		})
	}

	var (
		release = make(chan struct{})
		ready   sync.WaitGroup
		crowd   sync.WaitGroup
		mu      sync.Mutex
		times   = make([]time.Duration, 0, n)
		conns   = make([]net.Conn, 0, n)
		first   error
		neg     string
	)
	ready.Add(n)
	for range n {
		crowd.Go(func() {
			ready.Done()
			<-release
			t0 := time.Now()
			c, _, err := burstConnect(ctx, d, cfg, req)
			took := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = err
				}
				return
			}
			if neg == "" {
				neg = negotiated(c.ConnectionState())
			}
			times, conns = append(times, took), append(conns, c)
		})
	}
	ready.Wait() // the crowd at the barrier
	cpu0, err := proc.CPU(cf.pid)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	close(release)
	crowd.Wait()
	all := time.Since(start)
	cpu1, err := proc.CPU(cf.pid)
	stopProb.Store(true)
	probing.Wait()
	for _, c := range conns {
		c.Close()
	}
	if err := errors.Join(first, probeErr, err, ctx.Err()); err != nil {
		return nil, err
	}
	slices.Sort(times)
	slices.Sort(probeLat)
	res := &tlsBurstResult{Mode: "tls-burst", N: n, AllMs: float64(all) / 1e6,
		P50Ms: float64(times[len(times)/2]) / 1e6, ProbeN: len(probeLat),
		CPUms: float64(cpu1-cpu0) / 1e6, Negotiated: neg}
	if len(probeLat) > 0 {
		res.ProbeP99us = float64(probeLat[len(probeLat)*99/100]) / 1e3
	}
	logf("tls-burst: %d clients in %.0f ms (median %.0f ms), server CPU %.0f ms; probes: %d requests, p99 %.0f µs",
		n, res.AllMs, res.P50Ms, res.CPUms, res.ProbeN, res.ProbeP99us)
	return res, nil
}

// burstConnect dials, completes a full handshake and one GET, and returns the open connection.
func burstConnect(ctx context.Context, d *dialer, cfg *tls.Config, req []byte) (*tls.Conn, *bufio.Reader, error) {
	br := bufio.NewReaderSize(nil, 2048)
	tc, err := tlsRequest(ctx, d, cfg, br, req, 30*time.Second)
	return tc, br, err
}
