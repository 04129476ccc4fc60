//go:build !linux || dwell_portable

package netpoll

import (
	"net"
	"sync"
	"testing"
	"time"
)

// TestSharedListener: connections to a listener shared by several pollers are all accepted,
// each poller getting its share.
func TestSharedListener(t *testing.T) {
	for round := range 50 {
		lfd, err := Listen(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, false)
		if err != nil {
			t.Fatal(err)
		}
		addr, _ := BoundAddr(lfd)
		const loops, conns = 4, 64
		fds := Share(lfd, loops)
		var mu sync.Mutex
		got := map[int]int{}
		var wg sync.WaitGroup
		var stops []*Wakeup
		for i, fd := range fds {
			p, _ := NewPoller(64)
			if err := p.AddListener(fd, true); err != nil {
				t.Fatal(err)
			}
			stop, _ := NewWakeup()
			p.Add(stop.FD(), 0, WatchRead)
			stops = append(stops, stop)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					evs, _ := p.Wait(-1) // no timeout: a lost wake-up hangs the test
					for _, ev := range evs {
						if ev.FD() == stop.FD() {
							return
						}
						for {
							c, e := Accept(fd)
							if e != 0 {
								break
							}
							mu.Lock()
							got[i]++
							mu.Unlock()
							Close(c)
						}
					}
				}
			}()
		}
		var dials sync.WaitGroup
		for range conns {
			dials.Add(1)
			go func() {
				defer dials.Done()
				c, err := net.Dial("tcp", addr.String())
				if err == nil {
					defer c.Close()
				}
			}()
		}
		dials.Wait()
		// A bound that only a hang reaches, even on a small loaded machine.
		deadline := time.Now().Add(30 * time.Second)
		for {
			mu.Lock()
			n := 0
			for _, k := range got {
				n += k
			}
			mu.Unlock()
			if n == conns {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d of %d connections accepted: %v", round, n, conns, got)
			}
			time.Sleep(time.Millisecond)
		}
		for _, w := range stops {
			w.Signal()
		}
		wg.Wait()
		for _, fd := range fds {
			Close(fd)
		}
		Close(lfd)
	}
}

// TestShareTakesEarlyConnections: connections accepted before the listener was shared go to
// the shares too.
func TestShareTakesEarlyConnections(t *testing.T) {
	lfd, err := Listen(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(lfd)
	addr, _ := BoundAddr(lfd)
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	base := lookup(lfd)
	for {
		base.mu.Lock()
		n := len(base.accepted)
		base.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond) // the accepting goroutine is the network's to schedule
	}
	fds := Share(lfd, 2)
	got := 0
	for _, fd := range fds {
		if c, e := Accept(fd); e == 0 {
			Close(c)
			got++
		}
	}
	if got != 1 {
		t.Fatalf("%d connections taken from the shares, want 1", got)
	}
}
