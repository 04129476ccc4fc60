package router

import (
	"sync"
	"time"

	"github.com/dwellhttp/dwell/internal/fifo"
)

// DefaultHTTPWorkers is how many net/http handlers may run at once, unless SetHTTPWorkers
// changes it. A net/http handler holds its place for as long as it runs — a whole event
// stream, a long poll, a 30-second CPU profile — so the bound is far above wait.DefaultWorkers;
// it is there so that a flood of requests queues instead of starting a goroutine each. A
// handler waiting for its client — for request body bytes not yet sent, for the client to take
// response bytes — holds no place while it waits (see SetHTTPWorkers), so slow clients cannot
// fill the pool.
const DefaultHTTPWorkers = 4096

// SetHTTPWorkers changes how many net/http handlers (HTTPHandler, HandleHTTP, Mount) may run at
// once; n < 1 means DefaultHTTPWorkers. Requests beyond the bound wait their turn in order,
// their dwell handlers parked. It may be called at any time, from any goroutine; a smaller
// bound lets the handlers running finish, and starts no more until they are under it.
//
// A handler whose read of r.Body, or whose write, flush or file sent to the response, has to
// wait for its client gives up its place once its loop has gone on to other work, and the
// place goes to the next request; its goroutine waits with it. When the wait ends, the handler
// takes a place again before any request that has not started, waiting for one if the pool is
// full. So the pool counts handlers that run, and a slow client — a body trickled a byte at a
// time, a response read as slowly — holds a goroutine of its own but no place: at most n
// goroutines run or wait idle (an idle one ends 10 to 20 s after its last request), plus one for
// each bridged request whose handler is waiting for its client, which is at most one per
// connection.
func SetHTTPWorkers(n int) { httpWorkers.setSize(n) }

// httpWorkers runs the net/http handlers of every loop.
var httpWorkers = &workerPool{size: DefaultHTTPWorkers}

// A workerPool runs exchanges on goroutines, at most size of them holding a place at once. A
// worker that finishes takes the next queued exchange, or waits idle for one; workers idle
// for longer than workerIdle end. Keeping them spares each request a new goroutine and the
// growth of its stack, which is what net/http's connection goroutines are spared too; the most
// recently idle worker goes first, its stack warm.
//
// An exchange whose call waits for the client gives its place up (wait) and takes one again
// when the wait ends (resume), ahead of the exchanges not yet started: a place is held by a
// busy worker, or kept by an idle one for the next exchange, so busy+len(idle) <= size but for
// a while after the bound is lowered.
type workerPool struct {
	mu       sync.Mutex
	size     int
	busy     int                   // exchanges holding a place: running, not waiting for a client
	idle     []*worker             // oldest first
	waiting  int                   // exchanges whose call waits for the client, holding no place
	resuming fifo.Queue[*exchange] // exchanges whose wait is over, waiting for a place
	queue    fifo.Queue[*exchange] // exchanges not started, waiting for a place
	sweeping bool                  // a sweep of idle workers is scheduled
}

// A worker is one goroutine of the pool, waiting on next while idle.
type worker struct {
	next      chan *exchange // nil ends the worker
	idleSince time.Time
}

// workerIdle is how long a worker waits for work before it ends.
const workerIdle = 10 * time.Second

func newWorker() *worker { return &worker{next: make(chan *exchange, 1)} }

func (p *workerPool) setSize(n int) {
	if n < 1 {
		n = DefaultHTTPWorkers
	}
	p.mu.Lock()
	p.size = n
	p.endIdle(min(len(p.idle), p.busy+len(p.idle)-p.size))
	p.grant()
	p.mu.Unlock()
}

// start runs x on an idle worker, a new one, or the first to be free.
func (p *workerPool) start(x *exchange) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.busy++
		p.mu.Unlock()
		w.next <- x
		return
	}
	if p.busy+len(p.idle) < p.size {
		p.busy++
		p.mu.Unlock()
		go p.work(newWorker(), x)
		return
	}
	p.queue.Push(x)
	p.mu.Unlock()
}

// work is a worker's goroutine: it runs x, then the next exchange it is given, until it has
// been idle too long, the pool has shrunk, or its place went to an exchange resuming. A handler
// that calls runtime.Goexit ends the goroutine; its place goes to whoever waits for one.
func (p *workerPool) work(w *worker, x *exchange) {
	exited := true
	defer func() {
		if exited {
			p.replace()
		}
	}()
	for x != nil {
		x.run()
		x = p.nextFor(w)
	}
	exited = false
}

// nextFor returns the next exchange for worker w, whose exchange has finished, waiting idle for
// one if none is queued, or nil when w is to end.
func (p *workerPool) nextFor(w *worker) *exchange {
	p.mu.Lock()
	switch {
	case p.busy+len(p.idle) > p.size:
		p.busy--
		p.mu.Unlock()
		return nil
	case p.resuming.Len() > 0:
		// w's place goes to a handler mid-request, whose own goroutine goes on with it.
		p.resuming.Pop().done <- struct{}{}
		p.mu.Unlock()
		return nil
	case p.queue.Len() > 0:
		x := p.queue.Pop()
		p.mu.Unlock()
		return x
	}
	p.busy--
	w.idleSince = time.Now()
	p.idle = append(p.idle, w)
	if !p.sweeping {
		// A runtime timer, not a loop's: the pool serves every loop, and its workers are
		// goroutines of their own, which the sweep ends off any loop.
		p.sweeping = true
		time.AfterFunc(workerIdle, p.sweep)
	}
	p.mu.Unlock()
	return <-w.next
}

// wait gives up the place of an exchange whose call has to wait for its client: it goes to an
// exchange resuming or queued. It runs on the exchange's loop (see exchange.watch).
func (p *workerPool) wait() {
	p.mu.Lock()
	p.busy--
	p.waiting++
	p.grant()
	p.mu.Unlock()
}

// resume takes a place again for x, whose call waited for the client and is over, before it
// returns to its handler. It runs on the handler's goroutine, which waits for a place when none
// is free: after the exchanges already resuming, before those not started.
func (p *workerPool) resume(x *exchange) {
	p.mu.Lock()
	p.waiting--
	if p.resuming.Len() == 0 {
		// An idle worker's place serves a handler mid-request first.
		p.endIdle(min(len(p.idle), p.busy+len(p.idle)-p.size+1))
		if p.busy+len(p.idle) < p.size {
			p.busy++
			p.mu.Unlock()
			return
		}
	}
	p.resuming.Push(x)
	p.mu.Unlock()
	<-x.done // from grant or nextFor, which took the place for x
}

// grant gives the free places to the exchanges waiting for one: those resuming first, in order,
// then those not started. p.mu is held.
func (p *workerPool) grant() {
	for p.busy+len(p.idle) < p.size {
		switch {
		case p.resuming.Len() > 0:
			p.busy++
			p.resuming.Pop().done <- struct{}{} // buffered, and the goroutine waits for it
		case p.queue.Len() > 0:
			p.busy++
			go p.work(newWorker(), p.queue.Pop())
		default:
			return
		}
	}
}

// endIdle ends the n workers idle the longest (none for n <= 0). p.mu is held.
func (p *workerPool) endIdle(n int) {
	if n <= 0 {
		return
	}
	for _, w := range p.idle[:n] {
		w.next <- nil // buffered: the worker ends when it reads it
	}
	rest := copy(p.idle, p.idle[n:])
	clear(p.idle[rest:])
	p.idle = p.idle[:rest]
}

// sweep ends the workers idle for longer than workerIdle, and comes back while some are idle.
func (p *workerPool) sweep() {
	p.mu.Lock()
	cutoff := time.Now().Add(-workerIdle)
	n := 0
	for n < len(p.idle) && p.idle[n].idleSince.Before(cutoff) {
		n++
	}
	p.endIdle(n)
	p.sweeping = len(p.idle) > 0
	if p.sweeping {
		time.AfterFunc(workerIdle, p.sweep)
	}
	p.mu.Unlock()
}

// replace gives the place of a worker whose goroutine exited to whoever waits for one.
func (p *workerPool) replace() {
	p.mu.Lock()
	p.busy--
	p.grant()
	p.mu.Unlock()
}
