package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
)

// runPark holds requests that the server parks (GET /poll), reads the server's RSS at the
// checkpoints and, with -release, answers them all with one POST /release and times how long
// the last answer takes.
func runPark(ctx context.Context, args []string) (any, error) {
	var h holdFlags
	var release bool
	var releasePath string
	fs := flag.NewFlagSet("park", flag.ExitOnError)
	h.register(fs, "/poll")
	fs.BoolVar(&release, "release", false, "release the parked requests at the end and check every answer")
	fs.StringVar(&releasePath, "release-path", "/release", "path that releases the parked requests (POST)")
	fs.Parse(args)
	res := &holdResult{Mode: "park", Path: h.path}
	cfg, err := h.tls.config()
	if err != nil {
		return nil, err
	}
	req := request("GET", h.path, h.addr, -1)
	var once sync.Once
	conns, err := hold(ctx, &h, res, func(c *held) error {
		if cfg != nil {
			c.c.SetDeadline(time.Now().Add(10 * time.Second))
			if err := secureHeld(c, cfg, &once, res); err != nil {
				return err
			}
			c.c.SetDeadline(time.Time{})
		}
		_, err := c.c.Write(req)
		return err
	})
	defer closeAll(conns)
	if err != nil || !release {
		return res, err
	}
	n, elapsed, err := releaseAll(tlsDial(h.addr, cfg), h.addr, releasePath, conns)
	res.Released = n
	res.ReleaseMS = float64(elapsed) / float64(time.Millisecond)
	logf("park: %d of %d answered %.1f ms after the release", n, len(conns), res.ReleaseMS)
	return res, err
}

// releaseAll starts a reader on every parked connection, sends the release on a connection of
// dial's and waits for all the answers. It returns how many were right and how long the last
// one took.
func releaseAll(dial func() (net.Conn, error), addr, path string, conns []*held) (int, time.Duration, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		ok    int
		last  time.Time
		first error
	)
	deadline := time.Now().Add(30 * time.Second)
	start := make(chan struct{})
	for _, h := range conns {
		wg.Go(func() {
			<-start
			h.c.SetReadDeadline(deadline)
			r, err := readResponse(h.br, nil)
			if err == nil {
				err = check(r, peer.Released)
			}
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = err
				}
				return
			}
			ok++
			if now.After(last) {
				last = now
			}
		})
	}
	c, err := dial()
	if err != nil {
		close(start)
		wg.Wait()
		return 0, 0, err
	}
	defer c.Close()
	c.SetDeadline(deadline)
	t0 := time.Now()
	close(start)
	if _, err := exchange(c, bufio.NewReader(c), request("POST", path, addr, 0), ""); err != nil {
		wg.Wait()
		return ok, 0, fmt.Errorf("release: %w", err)
	}
	wg.Wait()
	if ok != len(conns) && first == nil {
		first = fmt.Errorf("%d of %d parked requests answered", ok, len(conns))
	}
	if last.IsZero() {
		return ok, 0, first
	}
	return ok, last.Sub(t0), first
}
