package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"slices"
	"sync"
	"time"
)

// latResult is what lat prints. Latencies are in microseconds.
type latResult struct {
	Mode      string  `json:"mode"`
	Path      string  `json:"path"`
	Conns     int     `json:"conns"`
	Seconds   float64 `json:"seconds"`
	Requests  int     `json:"requests"`
	Errors    int     `json:"errors"`
	ReqPerSec float64 `json:"req_per_sec"`
	P50us     float64 `json:"p50_us"`
	P99us     float64 `json:"p99_us"`
	P999us    float64 `json:"p999_us"`
	MaxUs     float64 `json:"max_us"`
	// FirstError is the first error seen, if any, to tell a refused connection from a bad answer.
	FirstError string `json:"first_error,omitempty"`
}

// runLat runs a closed loop: each of c connections sends a request, waits for the answer and
// sends the next, for d. Every latency is kept and sorted, so the percentiles are exact; at a few
// hundred thousand requests that costs a few MiB of the client's memory.
func runLat(ctx context.Context, args []string) (any, error) {
	var (
		cf        common
		conns     int
		dur       time.Duration
		closeEach bool
	)
	fs := flag.NewFlagSet("lat", flag.ExitOnError)
	cf.register(fs, "/hello")
	fs.IntVar(&conns, "c", 50, "connections")
	fs.DurationVar(&dur, "d", 4*time.Second, "duration")
	fs.BoolVar(&closeEach, "close", false, "send Connection: close and open a connection per request")
	fs.Parse(args)
	if conns <= 0 || dur <= 0 {
		return nil, fmt.Errorf("-c and -d must be positive")
	}
	d, err := newDialer(cf.addr, conns)
	if err != nil {
		return nil, err
	}
	var extra []string
	if closeEach {
		extra = append(extra, "Connection: close")
	}
	req := request("GET", cf.path, cf.addr, -1, extra...)

	start := time.Now()
	all, errs, firstErr := latLoad(ctx, d, req, conns, start.Add(dur))
	elapsed := time.Since(start)
	res := &latResult{
		Mode: "lat", Path: cf.path, Conns: conns, Seconds: elapsed.Seconds(),
		Requests: len(all), Errors: errs,
		ReqPerSec: float64(len(all)) / elapsed.Seconds(),
		P50us:     quantile(all, 0.50), P99us: quantile(all, 0.99), P999us: quantile(all, 0.999),
	}
	if len(all) > 0 {
		res.MaxUs = float64(all[len(all)-1]) / 1e3
	}
	if firstErr != nil {
		res.FirstError = firstErr.Error()
	}
	logf("lat: %d requests, %.0f req/s, p50 %.0f µs, p99 %.0f µs, p99.9 %.0f µs, %d errors",
		res.Requests, res.ReqPerSec, res.P50us, res.P99us, res.P999us, res.Errors)
	return res, nil
}

// latLoad runs conns connections' loops (latWorker) until end, and returns every latency,
// sorted, the errors counted and the first error.
func latLoad(ctx context.Context, d *dialer, req []byte, conns int, end time.Time) ([]time.Duration, int, error) {
	var (
		mu       sync.Mutex
		all      []time.Duration
		errs     int
		firstErr error
		wg       sync.WaitGroup
	)
	for range conns {
		wg.Go(func() {
			lats, n, err := latWorker(ctx, d, req, end)
			mu.Lock()
			defer mu.Unlock()
			all = append(all, lats...)
			errs += n
			if firstErr == nil {
				firstErr = err
			}
		})
	}
	wg.Wait()
	slices.Sort(all)
	return all, errs, firstErr
}

// latWorker runs one connection's loop until end. It reconnects after an error or a close, so
// a server that drops connections shows up as errors, not as a stalled worker.
func latWorker(ctx context.Context, d *dialer, req []byte, end time.Time) ([]time.Duration, int, error) {
	var (
		lats     []time.Duration
		errs     int
		firstErr error
		br       *bufio.Reader
	)
	fail := func(err error) {
		errs++
		if firstErr == nil {
			firstErr = err
		}
	}
	for time.Now().Before(end) && ctx.Err() == nil {
		c, err := d.dial()
		if err != nil {
			fail(err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		c.SetDeadline(end.Add(5 * time.Second))
		if br == nil {
			br = bufio.NewReaderSize(c, 16<<10)
		} else {
			br.Reset(c)
		}
		for time.Now().Before(end) && ctx.Err() == nil {
			t0 := time.Now()
			r, err := exchange(c, br, req, "")
			if err != nil {
				fail(err)
				break
			}
			lats = append(lats, time.Since(t0))
			if r.close {
				break
			}
		}
		c.Close()
	}
	return lats, errs, firstErr
}

// quantile returns the q-quantile of sorted latencies in microseconds (nearest rank).
func quantile(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted)) + 0.5)
	i = min(max(i-1, 0), len(sorted)-1)
	return float64(sorted[i]) / 1e3
}
