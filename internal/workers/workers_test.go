package workers

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// patience only runs out on a hang.
const patience = 30 * time.Second

type jobFunc func()

func (f jobFunc) Run() { f() }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %v", what, patience)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// TestBound: at most size jobs run at once, and all of them run.
func TestBound(t *testing.T) {
	p := New(2, 0)
	release := make(chan struct{})
	var running, most atomic.Int32
	var done sync.WaitGroup
	for range 6 {
		done.Add(1)
		p.Start(jobFunc(func() {
			defer done.Done()
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			<-release
			running.Add(-1)
		}))
	}
	waitFor(t, "two jobs running and four queued", func() bool { return running.Load() == 2 && p.State().Queued == 4 })
	close(release)
	done.Wait()
	if most.Load() != 2 {
		t.Errorf("%d jobs ran at once under a bound of 2", most.Load())
	}
	waitFor(t, "every goroutine to end (keep 0)", func() bool { s := p.State(); return s.Busy == 0 && s.Idle == 0 })
}

// TestOrder: jobs beyond the bound start in the order they came.
func TestOrder(t *testing.T) {
	p := New(1, 0)
	release := make(chan struct{})
	order := make(chan int, 5)
	p.Start(jobFunc(func() { <-release }))
	for i := range 5 {
		p.Start(jobFunc(func() { order <- i }))
	}
	close(release)
	for want := range 5 {
		if got := <-order; got != want {
			t.Fatalf("job %d started where job %d should have", got, want)
		}
	}
}

// dropJob is a Droppable job whose Run reports its number unless it was dropped.
type dropJob struct {
	n       int
	ran     chan int
	dropped atomic.Bool
}

func (j *dropJob) Run() {
	if !j.dropped.Load() {
		j.ran <- j.n
	}
}

func (j *dropJob) Dropped() bool { return j.dropped.Load() }

// TestDropBound: behind a busy place, jobs dropped in any pattern leave the queue holding at
// most as many dropped jobs as live ones (plus the one just dropped), and the live jobs still
// start in order.
func TestDropBound(t *testing.T) {
	p := New(1, 0)
	release := make(chan struct{})
	p.Start(jobFunc(func() { <-release }))
	ran := make(chan int, 100)
	live := 0
	for i := range 1000 {
		j := &dropJob{n: i, ran: ran}
		p.Start(j)
		if i%10 == 0 && live < 100 { // one job in ten stays
			live++
			continue
		}
		j.dropped.Store(true)
		p.Drop()
		if q := p.State().Queued; q > 2*live+1 {
			t.Fatalf("after job %d: %d queued for %d live jobs", i, q, live)
		}
	}
	close(release)
	for want := 0; want < 10*live; want += 10 {
		if got := <-ran; got != want {
			t.Fatalf("job %d ran where job %d should have", got, want)
		}
	}
}

// TestRejoinGoesFirst: a job that left its place and rejoins gets the next free place before a
// job that has not started.
func TestRejoinGoesFirst(t *testing.T) {
	p := New(1, 0)
	var mu sync.Mutex
	var order []string
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	left, rejoin, finishB := make(chan struct{}), make(chan struct{}), make(chan struct{})
	wake := make(chan struct{}, 1)
	var done sync.WaitGroup
	done.Add(3)
	p.Start(jobFunc(func() { // A: waits outside, then goes on
		defer done.Done()
		p.Leave()
		close(left)
		<-rejoin
		p.Rejoin(wake)
		note("A")
	}))
	<-left
	p.Start(jobFunc(func() { defer done.Done(); <-finishB; note("B") })) // takes A's place
	waitFor(t, "B running", func() bool { return p.State().Busy == 1 })
	p.Start(jobFunc(func() { defer done.Done(); note("C") })) // queued
	close(rejoin)
	waitFor(t, "A waiting for a place", func() bool { return p.State().Resuming == 1 })
	close(finishB)
	done.Wait()
	if got := order; len(got) != 3 || got[0] != "B" || got[1] != "A" || got[2] != "C" {
		t.Fatalf("order %v, want B A C", got)
	}
}

// TestGoexitFreesItsPlace: a job that calls runtime.Goexit ends its goroutine; the place goes
// to the next job.
func TestGoexitFreesItsPlace(t *testing.T) {
	p := New(1, 0)
	ran := make(chan struct{})
	p.Start(jobFunc(func() { runtime.Goexit() }))
	p.Start(jobFunc(func() { close(ran) }))
	select {
	case <-ran:
	case <-time.After(patience):
		t.Fatal("the job after a Goexit never ran")
	}
}

// TestIdleKeptAndShrunk: with a keep, a goroutine waits idle for the next job; lowering the
// bound ends those over it.
func TestIdleKeptAndShrunk(t *testing.T) {
	p := New(4, time.Hour)
	var done sync.WaitGroup
	release := make(chan struct{})
	for range 4 {
		done.Add(1)
		p.Start(jobFunc(func() { defer done.Done(); <-release }))
	}
	close(release)
	done.Wait()
	waitFor(t, "four idle goroutines", func() bool { return p.State().Idle == 4 })
	p.SetSize(1)
	if s := p.State(); s.Idle != 1 {
		t.Fatalf("%d idle under a bound of 1", s.Idle)
	}
}
