package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/proc"
)

// transferResult is what upload and download print.
type transferResult struct {
	Mode  string `json:"mode"`
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
	// Seconds runs from the first request byte written to the last response byte read.
	Seconds   float64 `json:"seconds"`
	GBPerSec  float64 `json:"gb_per_sec"`
	RSSBefore int64   `json:"rss_before_bytes"`
	// RSSPeak is the highest RSS sampled (every 2 ms) during the transfer; RSSGrowth is
	// RSSPeak-RSSBefore: what the server needed to hold while moving the bytes.
	RSSPeak   int64 `json:"rss_peak_bytes"`
	RSSGrowth int64 `json:"rss_growth_bytes"`
}

// transferBuf is the client's block size: large writes and reads keep the client's own syscalls
// from being what limits the rate.
const transferBuf = 256 << 10

func transferFlags(name, path string, args []string) (common, int64) {
	var cf common
	var size int64
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	cf.register(fs, path)
	fs.Int64Var(&size, "size", 512<<20, "bytes to transfer")
	fs.Parse(args)
	return cf, size
}

// runUpload POSTs size zero bytes with a Content-Length on one connection and checks that the
// server counted them all.
func runUpload(ctx context.Context, args []string) (any, error) {
	cf, size := transferFlags("upload", "/upload", args)
	res := &transferResult{Mode: "upload", Path: cf.path, Bytes: size}
	err := transfer(ctx, cf, res, func(c net.Conn, br *bufio.Reader) error {
		if _, err := c.Write(request("POST", cf.path, cf.addr, size)); err != nil {
			return err
		}
		buf := make([]byte, transferBuf)
		for left := size; left > 0; {
			p := buf[:min(int64(len(buf)), left)]
			n, err := c.Write(p)
			left -= int64(n)
			if err != nil {
				return err
			}
		}
		r, err := readResponse(br, nil)
		if err != nil {
			return err
		}
		return check(r, strconv.FormatInt(size, 10))
	})
	return res, err
}

// runDownload GETs path?n=size and reads the body through a fixed buffer.
func runDownload(ctx context.Context, args []string) (any, error) {
	cf, size := transferFlags("download", "/download", args)
	res := &transferResult{Mode: "download", Path: cf.path, Bytes: size}
	err := transfer(ctx, cf, res, func(c net.Conn, br *bufio.Reader) error {
		path := fmt.Sprintf("%s?n=%d", cf.path, size)
		if _, err := c.Write(request("GET", path, cf.addr, -1)); err != nil {
			return err
		}
		r, err := readResponse(br, make([]byte, transferBuf))
		if err != nil {
			return err
		}
		if r.status != 200 || r.length != size {
			return fmt.Errorf("download: status %d, %d bytes, want 200 and %d", r.status, r.length, size)
		}
		return nil
	})
	return res, err
}

// transfer dials, samples the server's RSS while run moves the bytes, and fills in res.
func transfer(ctx context.Context, cf common, res *transferResult, run func(net.Conn, *bufio.Reader) error) error {
	c, err := net.DialTimeout("tcp", cf.addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	c.SetDeadline(time.Now().Add(5 * time.Minute))
	br := bufio.NewReaderSize(c, 64<<10)

	var (
		peak    int64
		done    = make(chan struct{})
		sampler sync.WaitGroup
	)
	if cf.pid != 0 {
		settle(ctx, cf.pid)
		if res.RSSBefore, err = proc.RSS(cf.pid); err != nil {
			return err
		}
		peak = res.RSSBefore
		pids, err := proc.Tree(cf.pid)
		if err != nil {
			return err
		}
		sampler.Go(func() {
			t := time.NewTicker(2 * time.Millisecond)
			defer t.Stop()
			for {
				if rss, err := proc.RSSOf(pids); err == nil && rss > peak {
					peak = rss
				}
				select {
				case <-done:
					return
				case <-t.C:
				}
			}
		})
	}
	t0 := time.Now()
	err = run(c, br)
	elapsed := time.Since(t0)
	close(done)
	sampler.Wait()
	if err != nil {
		return err
	}
	res.Seconds = elapsed.Seconds()
	res.GBPerSec = float64(res.Bytes) / elapsed.Seconds() / 1e9
	if cf.pid != 0 {
		// One last reading after the transfer: memory a server keeps once it answered counts.
		if rss, err := proc.RSS(cf.pid); err == nil && rss > peak {
			peak = rss
		}
		res.RSSPeak = peak
		res.RSSGrowth = peak - res.RSSBefore
	}
	logf("%s: %d bytes in %.3f s, %.2f GB/s, server RSS +%.1f MiB",
		res.Mode, res.Bytes, res.Seconds, res.GBPerSec, float64(res.RSSGrowth)/(1<<20))
	return nil
}
