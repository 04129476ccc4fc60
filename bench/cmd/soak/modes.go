package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// shutdowns starts a server -runs times, and shuts each down a second into a load of 8 clients
// on one connection (h2c, or HTTP/1.1 keep-alive with -h1): 4 asking GET /sleep?ms=50, 4
// POSTing 300 KB to /echo.
func shutdowns(start func() *server) {
	always := func() bool { return true } // the failures the tallies keep are those of the shutdowns
	total := newTally(always)
	for range *runs {
		s := start()
		c := &http.Client{Transport: h2cTransport()}
		if *h1 {
			c = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
		}
		body := []byte(strings.Repeat("x", 300_000))
		t := newTally(always)
		var wg sync.WaitGroup
		end := time.Now().Add(3 * time.Second)
		for i := range 8 {
			wg.Go(func() {
				for time.Now().Before(end) {
					what, path, method, sent, want := "GET /sleep", "/sleep?ms=50", "GET", []byte(nil), []byte("slept")
					if i%2 == 0 {
						what, path, method, sent, want = "POST /echo", "/echo", "POST", body, body
					}
					resp, b, err := get(context.Background(), c, method, "http://"+s.addr+path, sent)
					switch {
					case err != nil:
						t.fail(what, err)
						time.Sleep(20 * time.Millisecond) // not a storm of refused connections
						continue
					case resp.StatusCode != 200 || string(b) != string(want):
						t.fail(what, fmt.Errorf("status %d, %d bytes", resp.StatusCode, len(b)))
					default:
						t.ok.Add(1)
					}
				}
			})
		}
		time.Sleep(time.Second)
		s.markStopping()
		clean, log := s.stop()
		wg.Wait()
		if !clean {
			t.fail("the shutdown", fmt.Errorf("logged %q", log))
		}
		fmt.Printf("%d failed, %d succeeded\n", t.failures(), t.ok.Load())
		total.merge(t)
	}
	total.print(fmt.Sprintf("%d shutdowns", *runs))
	if total.failures() > 0 {
		os.Exit(1)
	}
}

// graceMode is the grace period of -mode grace: shorter than every wait its clients ask for.
const graceMode = 300 * time.Millisecond

// graceEnds starts a server -runs times and shuts each down with the grace period of graceMode
// under 16 clients whose requests wait longer than it — 8 on one h2c connection, 8 on HTTP/1.1
// keep-alive, each asking in turn GET /sleep?ms=5000, which the grace period's end wakes (the
// handler still answers "slept"), and GET /do?ms=1500, whose function runs to its end before
// the handler, told of the shutdown, writes nothing (the server answers 503). Every request
// sent before the shutdown must be answered one way or the other, none cut.
func graceEnds(start func() *server) {
	always := func() bool { return true } // the failures the tallies keep are those of the shutdowns
	total := newTally(always)
	for range *runs {
		s := start()
		h2 := &http.Client{Transport: h2cTransport()}
		h1 := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
		t := newTally(always)
		var wg sync.WaitGroup
		for i := range 16 {
			c := h2
			if i%2 == 1 {
				c = h1
			}
			wg.Go(func() {
				for k := 0; !s.stopping() || k == 0; k++ {
					what, path, want := "GET /sleep", "/sleep?ms=5000", "slept"
					if (i/2+k)%2 == 1 {
						what, path, want = "GET /do", "/do?ms=1500", ""
					}
					resp, b, err := get(context.Background(), c, "GET", "http://"+s.addr+path, nil)
					switch {
					case err != nil:
						t.fail(what, err)
					case resp.StatusCode == 503 && want == "":
						t.expect("answered 503 at the grace period's end")
					case resp.StatusCode != 200 || string(b) != want:
						t.fail(what, fmt.Errorf("status %d, %.40q", resp.StatusCode, b))
					default:
						t.ok.Add(1)
					}
				}
			})
		}
		time.Sleep(time.Second) // every client waits in a handler
		s.markStopping()
		clean, log := s.stopWith("context deadline exceeded")
		wg.Wait()
		if !clean {
			t.fail("the shutdown", fmt.Errorf("logged %q", log))
		}
		fmt.Printf("%d failed, %d succeeded, %d answered 503\n", t.failures(), t.ok.Load(), t.expected["answered 503 at the grace period's end"])
		total.merge(t)
	}
	total.print(fmt.Sprintf("%d grace periods ended", *runs))
	if total.failures() > 0 {
		os.Exit(1)
	}
}

// streams opens 150 streams at once on one h2c connection to a handler that waits on wait.Do
// for 30 ms, a third of them cancelled within 20 ms, for -d.
func streams(s *server) {
	c := &http.Client{Transport: h2cTransport()}
	t := newTally(func() bool { return false })
	end := time.Now().Add(*dur)
	var wg sync.WaitGroup
	for range 150 {
		wg.Go(func() {
			for time.Now().Before(end) {
				ctx, cancel := context.WithCancel(context.Background())
				cut := rand.IntN(3) == 0
				if cut {
					time.AfterFunc(time.Duration(rand.IntN(20))*time.Millisecond, cancel)
				}
				resp, b, err := get(ctx, c, "GET", "http://"+s.addr+"/do?ms=30", nil)
				cancel()
				switch {
				case err != nil && cut:
					t.expect("cancelled")
				case err != nil:
					t.fail("GET /do", err)
				case resp.StatusCode != 200 || string(b) != "done":
					t.fail("GET /do", fmt.Errorf("status %d, %.40q", resp.StatusCode, b))
				default:
					t.ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	clean, log := s.stop()
	t.print("150 streams at once, a third cancelled")
	if !clean {
		fmt.Printf("the server's log:\n%s", log)
	}
	if !clean || t.failures() > 0 {
		os.Exit(1)
	}
}
