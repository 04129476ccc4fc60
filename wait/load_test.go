package wait

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
)

// TestDoKeepsLoopResponsive is a bounded load test: on one loop, 200 handlers at a time each wait
// in Do on a 100 ms blocking call, again and again, while a few clients time quick requests on
// the same loop. Their p99 must stay under 10 ms: blocking work in Do costs the loop nothing.
// It runs twice: with a pool big enough for all 200, and with 50 workers, so that calls queue.
func TestDoKeepsLoopResponsive(t *testing.T) {
	if testing.Short() {
		t.Skip("a load test of about 3 s")
	}
	for _, workers := range []int{256, 50} {
		t.Run(map[int]string{256: "pool-256", 50: "pool-50"}[workers], func(t *testing.T) {
			p50, p99, max, n, slow := loadBesideDo(t, workers, 200, 1200*time.Millisecond)
			t.Logf("%d workers, 200 handlers in Do(100 ms): %d quick requests p50 %v p99 %v max %v; %d Do calls done",
				workers, n, p50, p99, max, slow)
			if slow < 200 {
				t.Errorf("only %d Do calls finished", slow)
			}
			if p99 >= 10*time.Millisecond && !raceEnabled {
				t.Errorf("p99 %v beside 200 handlers in Do, want < 10 ms", p99)
			}
		})
	}
}

// loadBesideDo runs the load for d and returns the quick requests' latency percentiles, their
// count and how many Do calls finished.
func loadBesideDo(t *testing.T, workers, slowClients int, d time.Duration) (p50, p99, max time.Duration, n, slow int) {
	pool := NewPool(workers)
	_, addr := startServer(t, func(c *core.Ctx) {
		if c.Path() == "/slow" {
			err := pool.Do(c, func() { time.Sleep(100 * time.Millisecond) }) // the blocking call
			c.WriteString(errString(err))
			return
		}
		c.WriteString("quick")
	}, 1)
	stop := time.Now().Add(d)
	var (
		mu   sync.Mutex
		lats []time.Duration
		wg   sync.WaitGroup
	)
	for range slowClients {
		wg.Go(func() {
			c := dial(t, addr)
			for time.Now().Before(stop) {
				c.get("/slow")
				if _, body := c.response(); body != "nil" {
					t.Errorf("slow: %q", body)
					return
				}
				mu.Lock()
				slow++
				mu.Unlock()
			}
		})
	}
	time.Sleep(150 * time.Millisecond) // every slow client has a call in Do
	for range 4 {
		wg.Go(func() {
			c := dial(t, addr)
			var mine []time.Duration
			for time.Now().Before(stop) {
				start := time.Now()
				c.get("/quick")
				if _, body := c.response(); body != "quick" {
					t.Errorf("quick: %q", body)
					return
				}
				mine = append(mine, time.Since(start))
				time.Sleep(time.Millisecond) // paced: latency, not throughput
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(lats) == 0 {
		t.Fatal("no quick request answered")
	}
	slices.Sort(lats)
	at := func(q float64) time.Duration { return lats[min(len(lats)-1, int(q*float64(len(lats))))] }
	return at(0.50), at(0.99), lats[len(lats)-1], len(lats), slow
}
