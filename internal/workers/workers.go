// Package workers is the pool of goroutines behind blocking work: wait.Do's functions and the
// net/http bridge's handlers. A Pool runs jobs on a bounded number of goroutines, queues the
// jobs beyond the bound in order, lets a job that is only waiting for something outside (a
// slow client) give up its place meanwhile, and keeps idle goroutines for a while (or not at
// all) so that a burst does not start a goroutine per job.
package workers

import (
	"sync"
	"time"

	"github.com/dwellhttp/dwell/internal/fifo"
)

// A Job is what a Pool runs: Run, on a goroutine of the pool. A Run that calls runtime.Goexit
// ends its goroutine only: the pool gives its place to another.
type Job interface{ Run() }

// A Droppable job may be given up before it starts (its caller no longer waits for it): from
// then on Dropped returns true, and its Run does nothing. See Pool.Drop.
type Droppable interface {
	Job
	Dropped() bool
}

// A Pool runs Jobs on goroutines, at most size of them holding a place at once. A goroutine
// whose job is done takes the next queued job, or waits idle for one for up to keep (none at
// all for a keep of zero), the most recently idle first, its stack warm.
//
// A job that waits for something outside the pool gives its place up (Leave) and takes one
// again when the wait is over (Rejoin), ahead of the jobs not yet started: a place is held by a
// busy goroutine or kept by an idle one for the next job, so busy+len(idle) <= size but for a
// while after the bound is lowered. All its methods may be called from any goroutine.
type Pool struct {
	mu       sync.Mutex
	size     int
	keep     time.Duration
	busy     int                       // jobs holding a place: running, not waiting outside
	idle     []*worker                 // oldest first
	waiting  int                       // jobs that gave up their place (Leave)
	resuming fifo.Queue[chan struct{}] // jobs whose wait is over, waiting for a place
	queue    fifo.Queue[Job]           // jobs not started, waiting for a place
	dropped  int                       // Drop calls since the queue was last rid of dropped jobs
	sweeping bool                      // a sweep of idle goroutines is scheduled
}

// A worker is one goroutine of the pool, waiting on next while idle.
type worker struct {
	next      chan Job // nil ends the worker
	idleSince time.Time
}

func newWorker() *worker { return &worker{next: make(chan Job, 1)} }

// New returns a pool of at most size goroutines (at least 1) whose idle goroutines wait keep
// for another job before they end.
func New(size int, keep time.Duration) *Pool {
	return &Pool{size: max(size, 1), keep: keep}
}

// SetSize changes the bound to n (at least 1). Jobs running finish; when the bound shrinks,
// idle goroutines over it end at once and busy ones as their jobs finish, and when it grows the
// waiting jobs start.
func (p *Pool) SetSize(n int) {
	p.mu.Lock()
	p.size = max(n, 1)
	p.endIdle(min(len(p.idle), p.busy+len(p.idle)-p.size))
	p.grant()
	p.mu.Unlock()
}

// Size returns the bound.
func (p *Pool) Size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.size
}

// Start runs j on an idle goroutine, a new one, or the first to be free.
func (p *Pool) Start(j Job) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.busy++
		p.mu.Unlock()
		w.next <- j
		return
	}
	if p.busy+len(p.idle) < p.size {
		p.busy++
		p.mu.Unlock()
		go p.work(newWorker(), j)
		return
	}
	p.queue.Push(j)
	p.mu.Unlock()
}

// Drop tells the pool that a Droppable job it was given has been given up, and may still wait
// in its queue. Once such jobs may be half of the queue, the pool removes them (a pass over the
// queue, which the calls since the last pass pay for), so that jobs given up faster than jobs
// start — callers that leave while the pool is busy — cost at most as much memory as the jobs
// still waiting, not all that were ever queued.
func (p *Pool) Drop() {
	p.mu.Lock()
	p.dropped++
	if p.dropped*2 >= p.queue.Len() {
		p.queue.DeleteFunc(func(j Job) bool {
			d, ok := j.(Droppable)
			return ok && d.Dropped()
		})
		p.dropped = 0
	}
	p.mu.Unlock()
}

// Leave gives up the place of a running job that waits for something outside the pool: the
// place goes to a job resuming or queued. The job's goroutine waits with it, holding no place.
func (p *Pool) Leave() {
	p.mu.Lock()
	p.busy--
	p.waiting++
	p.grant()
	p.mu.Unlock()
}

// Rejoin takes a place again for a job that left, before it goes on: at once when one is free,
// else it waits on wake (a channel of the job's, with room for one value, that nothing else
// sends on meanwhile) until one is, after the jobs already resuming and before those not
// started. Call it from the job's goroutine.
func (p *Pool) Rejoin(wake chan struct{}) {
	p.mu.Lock()
	p.waiting--
	if p.resuming.Len() == 0 {
		// An idle goroutine's place serves a job mid-way first.
		p.endIdle(min(len(p.idle), p.busy+len(p.idle)-p.size+1))
		if p.busy+len(p.idle) < p.size {
			p.busy++
			p.mu.Unlock()
			return
		}
	}
	p.resuming.Push(wake)
	p.mu.Unlock()
	<-wake // from grant or next, which took the place for the job
}

// work is a goroutine of the pool: it runs j, then the next job it is given, until it has been
// idle for keep or the pool has shrunk, or its place went to a job resuming.
func (p *Pool) work(w *worker, j Job) {
	exited := true
	defer func() {
		if exited { // Run called runtime.Goexit
			p.mu.Lock()
			p.busy--
			p.grant()
			p.mu.Unlock()
		}
	}()
	for j != nil {
		j.Run()
		j = p.next(w)
	}
	exited = false
}

// next returns the next job for w, whose job is done, waiting idle for one if none is queued and
// the pool keeps idle goroutines, or nil when w is to end.
func (p *Pool) next(w *worker) Job {
	p.mu.Lock()
	switch {
	case p.busy+len(p.idle) > p.size:
	case p.resuming.Len() > 0:
		// w's place goes to a job mid-way, whose own goroutine goes on with it.
		p.resuming.Pop() <- struct{}{}
		p.mu.Unlock()
		return nil
	case p.queue.Len() > 0:
		j := p.queue.Pop()
		p.mu.Unlock()
		return j
	case p.keep > 0:
		p.busy--
		w.idleSince = time.Now()
		p.idle = append(p.idle, w)
		if !p.sweeping {
			// A runtime timer, not a loop's: the pool serves every loop, and its goroutines
			// are of their own, which the sweep ends off any loop.
			p.sweeping = true
			time.AfterFunc(p.keep, p.sweep)
		}
		p.mu.Unlock()
		return <-w.next
	}
	p.busy--
	p.mu.Unlock()
	return nil
}

// grant gives the free places to the jobs waiting for one: those resuming first, in order, then
// those not started. p.mu is held.
func (p *Pool) grant() {
	for p.busy+len(p.idle) < p.size {
		switch {
		case p.resuming.Len() > 0:
			p.busy++
			p.resuming.Pop() <- struct{}{} // room for one, and the job's goroutine waits for it
		case p.queue.Len() > 0:
			p.busy++
			go p.work(newWorker(), p.queue.Pop())
		default:
			return
		}
	}
}

// endIdle ends the n goroutines idle the longest (none for n <= 0). p.mu is held.
func (p *Pool) endIdle(n int) {
	if n <= 0 {
		return
	}
	for _, w := range p.idle[:n] {
		w.next <- nil // room for one: the goroutine ends when it reads it
	}
	rest := copy(p.idle, p.idle[n:])
	clear(p.idle[rest:])
	p.idle = p.idle[:rest]
}

// sweep ends the goroutines idle for longer than keep, and comes back while some are idle.
func (p *Pool) sweep() {
	p.mu.Lock()
	cutoff := time.Now().Add(-p.keep)
	n := 0
	for n < len(p.idle) && p.idle[n].idleSince.Before(cutoff) {
		n++
	}
	p.endIdle(n)
	p.sweeping = len(p.idle) > 0
	if p.sweeping {
		time.AfterFunc(p.keep, p.sweep)
	}
	p.mu.Unlock()
}

// A State is what a Pool holds at one moment, for tests and stats.
type State struct {
	Size, Busy, Idle, Waiting, Resuming, Queued int
}

// State returns what the pool holds now.
func (p *Pool) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return State{p.size, p.busy, len(p.idle), p.waiting, p.resuming.Len(), p.queue.Len()}
}
