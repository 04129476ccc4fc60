package nethttp

import (
	"time"

	"github.com/dwellhttp/dwell/internal/workers"
)

// DefaultWorkers is how many net/http handlers may run at once, unless SetWorkers
// changes it. A net/http handler holds its place for as long as it runs — a whole event
// stream, a long poll, a 30-second CPU profile — so the bound is far above wait.DefaultWorkers;
// it is there so that a flood of requests queues instead of starting a goroutine each. A
// handler waiting for its client — for request body bytes not yet sent, for the client to take
// response bytes — holds no place while it waits (see SetWorkers), so slow clients cannot
// fill the pool.
const DefaultWorkers = 4096

// SetWorkers changes how many net/http handlers (Handler, router.HandleHTTP and Mount) may run at
// once; n < 1 means DefaultWorkers. Requests beyond the bound wait their turn in order,
// their dwell handlers parked. It may be called at any time, from any goroutine; a smaller
// bound lets the handlers running finish, and starts no more until they are under it.
//
// A handler whose read of r.Body, or whose write, flush or file sent to the response, has to
// wait for its client gives up its place once its loop has gone on to other work, and the
// place goes to the next request; its goroutine waits with it. When the wait ends, the handler
// takes a place again before any request that has not started, waiting for one if the pool is
// full. So the pool counts handlers that run, and a slow client — a body trickled a byte at a
// time, a response read as slowly — holds a goroutine of its own but no place. A handler that
// has hijacked its connection (a WebSocket's) holds no place from the hijack on: what it does
// with the connection is the work of its own goroutine, as a goroutine it started would be, and
// it takes a place again only to return. So at most n goroutines run or wait idle (an idle one
// ends 10 to 20 s after its last request), plus one for each bridged request whose handler is
// waiting for its client or keeps a hijacked connection, which is at most one per connection.
func SetWorkers(n int) {
	if n < 1 {
		n = DefaultWorkers
	}
	httpWorkers.SetSize(n)
}

// httpWorkers runs the net/http handlers of every loop. Its idle goroutines wait workerIdle for
// the next request: keeping them spares each request a new goroutine and the growth of its
// stack, which is what net/http's connection goroutines are spared too.
var httpWorkers = workers.New(DefaultWorkers, workerIdle)

// workerIdle is how long a worker waits for work before it ends.
const workerIdle = 10 * time.Second
