package wait

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestDoKeepsLoopResponsive: on one loop, 200 handlers wait in Do on calls that block, while a
// few clients make quick requests on the same loop. Every quick request is answered while all
// 200 calls are still blocked: blocking work in Do costs the loop nothing. It runs twice: with a
// pool big enough for all 200, and with 50 workers, so that calls queue. The quick requests'
// latencies are logged, not bounded: how fast is for the benchmarks, and on a small loaded
// machine a wall-clock bound fails for want of a processor, not for a fault of the loop's.
func TestDoKeepsLoopResponsive(t *testing.T) {
	const slowClients, quickClients, quickRequests = 200, 4, 100
	for _, workers := range []int{256, 50} {
		t.Run(fmt.Sprintf("pool-%d", workers), func(t *testing.T) {
			pool := NewPool(workers)
			release := make(chan struct{})
			_, addr := coretest.Serve(t, func(c *core.Ctx) {
				if c.Path() == "/slow" {
					err := pool.Do(c, func() { <-release }) // the blocking call
					c.WriteString(errString(err))
					return
				}
				c.WriteString("quick")
			}, core.Options{Loops: 1})
			// Every slow call on a worker or queued for one, and all of them blocked.
			running, queued := min(workers, slowClients), max(slowClients-workers, 0)
			blocked := func() bool {
				s := pool.workers.State()
				return s.Busy == running && s.Queued == queued
			}
			slow := make([]*client, slowClients)
			for i := range slow {
				slow[i] = dial(t, addr)
				slow[i].get("/slow")
			}
			coretest.WaitFor(t, "every slow call running or queued", blocked)

			var (
				mu   sync.Mutex
				lats []time.Duration
				wg   sync.WaitGroup
			)
			for range quickClients {
				c := dial(t, addr)
				wg.Go(func() {
					mine := make([]time.Duration, 0, quickRequests)
					for range quickRequests {
						start := time.Now()
						c.get("/quick")
						if _, body := c.response(); body != "quick" {
							t.Errorf("quick: %q", body)
							return
						}
						mine = append(mine, time.Since(start))
					}
					mu.Lock()
					lats = append(lats, mine...)
					mu.Unlock()
				})
			}
			wg.Wait()
			if !blocked() {
				t.Fatal("a slow call ended or moved while its fn was blocked")
			}
			if len(lats) != quickClients*quickRequests {
				t.Fatalf("%d of %d quick requests answered", len(lats), quickClients*quickRequests)
			}
			close(release)
			for i, c := range slow {
				if _, body := c.response(); body != "nil" {
					t.Fatalf("slow %d: %q", i, body)
				}
			}
			slices.Sort(lats)
			at := func(q float64) time.Duration { return lats[int(q*float64(len(lats)-1))] }
			t.Logf("%d workers, %d handlers in Do: %d quick requests p50 %v p99 %v max %v",
				workers, slowClients, len(lats), at(0.50), at(0.99), lats[len(lats)-1])
		})
	}
}
