package router

import (
	"sync"
	"time"

	"github.com/dwellhttp/dwell/internal/fifo"
)

// DefaultHTTPWorkers is how many net/http handlers may run at once, unless SetHTTPWorkers
// changes it. A net/http handler holds its goroutine for as long as it runs — a whole event
// stream, a long poll, a 30-second CPU profile — so the bound is far above wait.DefaultWorkers;
// it is there so that a flood of requests queues instead of starting a goroutine each.
const DefaultHTTPWorkers = 4096

// SetHTTPWorkers changes how many net/http handlers (HTTPHandler, HandleHTTP, Mount) may run at
// once; n < 1 means DefaultHTTPWorkers. Requests beyond the bound wait their turn in order,
// their dwell handlers parked. It may be called at any time, from any goroutine.
func SetHTTPWorkers(n int) { httpWorkers.setSize(n) }

// httpWorkers runs the net/http handlers of every loop.
var httpWorkers = newWorkerPool(DefaultHTTPWorkers)

// A workerPool runs exchanges on a bounded set of goroutines. A worker that finishes takes the
// next queued exchange, or waits idle for one; workers idle for longer than workerIdle end.
// Keeping them spares each request a new goroutine and the growth of its stack, which is what
// net/http's connection goroutines are spared too; the most recently idle worker goes first,
// its stack warm.
type workerPool struct {
	mu       sync.Mutex
	size     int
	running  int                   // workers alive, busy or idle
	idle     []*worker             // oldest first
	queue    fifo.Queue[*exchange] // exchanges waiting for a worker
	sweeping bool                  // a sweep of idle workers is scheduled
}

// A worker is one goroutine of the pool, waiting on next while idle.
type worker struct {
	next      chan *exchange // nil ends the worker
	idleSince time.Time
}

// workerIdle is how long a worker waits for work before it ends.
const workerIdle = 10 * time.Second

func newWorkerPool(size int) *workerPool {
	p := &workerPool{}
	p.setSize(size)
	return p
}

func (p *workerPool) setSize(n int) {
	if n < 1 {
		n = DefaultHTTPWorkers
	}
	p.mu.Lock()
	p.size = n
	for p.running < p.size && p.queue.Len() > 0 {
		p.running++
		go p.work(&worker{next: make(chan *exchange, 1)}, p.queue.Pop())
	}
	p.mu.Unlock()
}

// start runs x on an idle worker, a new one, or the first to be free.
func (p *workerPool) start(x *exchange) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.next <- x
		return
	}
	if p.running < p.size {
		p.running++
		p.mu.Unlock()
		go p.work(&worker{next: make(chan *exchange, 1)}, x)
		return
	}
	p.queue.Push(x)
	p.mu.Unlock()
}

// work is a worker's goroutine: it runs x, then the next exchange it is given, until it has
// been idle too long or the pool has shrunk. A handler that calls runtime.Goexit ends the
// goroutine; its place goes to a new one if exchanges are queued.
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

// nextFor returns the next exchange for worker w, waiting idle for one if none is queued, or
// nil when w is to end.
func (p *workerPool) nextFor(w *worker) *exchange {
	p.mu.Lock()
	if p.running > p.size {
		p.running--
		p.mu.Unlock()
		return nil
	}
	if p.queue.Len() > 0 {
		x := p.queue.Pop()
		p.mu.Unlock()
		return x
	}
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

// sweep ends the workers idle for longer than workerIdle, and comes back while some are idle.
func (p *workerPool) sweep() {
	p.mu.Lock()
	cutoff := time.Now().Add(-workerIdle)
	n := 0
	for n < len(p.idle) && p.idle[n].idleSince.Before(cutoff) {
		p.idle[n].next <- nil // buffered: the worker ends when it reads it
		n++
	}
	rest := copy(p.idle, p.idle[n:])
	clear(p.idle[rest:])
	p.idle = p.idle[:rest]
	p.running -= n
	p.sweeping = len(p.idle) > 0
	if p.sweeping {
		time.AfterFunc(workerIdle, p.sweep)
	}
	p.mu.Unlock()
}

// replace gives the place of a worker whose goroutine exited to a new one, if exchanges are
// waiting, or frees it.
func (p *workerPool) replace() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running <= p.size && p.queue.Len() > 0 {
		go p.work(&worker{next: make(chan *exchange, 1)}, p.queue.Pop())
		return
	}
	p.running--
}
