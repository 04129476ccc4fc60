package nethttp

import (
	"net/http"
	"time"

	"github.com/dwellhttp/dwell/core"
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
// once — the places of the default pool, which the handlers of a Pool of their own do not
// take; n < 1 means DefaultWorkers. Requests beyond the bound wait their turn in order,
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
func SetWorkers(n int) { defaultPool.SetSize(n) }

// A Pool is a bound of their own for some net/http handlers: the handlers its Handler makes run
// in its places, not in the default pool's (SetWorkers), under the same rules. It is for
// handlers that hold their place for long — a gRPC server stream following a topic, an event
// stream of a net/http library's — so that many of them cannot take the places the short
// requests of every other bridged route need, nor those take theirs:
//
//	streams := nethttp.NewPool(100_000) // one goroutine each, as many as there are streams
//	r.Handle("POST", "/feed.Feed/Follow", streams.Handler(grpcServer))
//
// A Pool's idle goroutines end as the default pool's do. A Pool must not be copied.
type Pool struct {
	w *workers.Pool
}

// NewPool returns a Pool of n places; n < 1 means DefaultWorkers.
func NewPool(n int) *Pool {
	if n < 1 {
		n = DefaultWorkers
	}
	return &Pool{w: workers.New(n, workerIdle)}
}

// SetSize changes the pool's number of places, as SetWorkers does the default pool's; n < 1
// means DefaultWorkers.
func (p *Pool) SetSize(n int) {
	if n < 1 {
		n = DefaultWorkers
	}
	p.w.SetSize(n)
}

// Handler is the package's Handler, h running in the pool's places.
func (p *Pool) Handler(h http.Handler) core.Handler {
	if h == nil {
		panic("dwell: nil http.Handler")
	}
	// A func literal, not a method value, which would add a wrapper's frame under the parked
	// handler (see router.Router.Handler).
	return func(c *core.Ctx) { serveHTTP(c, h, p.w) }
}

// defaultPool runs the net/http handlers made by Handler, router.HandleHTTP and Mount, on every
// loop. A pool's idle goroutines wait workerIdle for the next request: keeping them spares each
// request a new goroutine and the growth of its stack, which is what net/http's connection
// goroutines are spared too.
var defaultPool = NewPool(DefaultWorkers)

// workerIdle is how long a worker waits for work before it ends.
const workerIdle = 10 * time.Second
