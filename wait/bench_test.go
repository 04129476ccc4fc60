package wait

import (
	"strconv"
	"sync"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// Costs of one park and resume. Each benchmark runs its b.N iterations inside handlers, so the
// request around them is paid once.

// inHandlers serves h on one loop and runs one request per path, concurrently, to its end.
func inHandlers(b *testing.B, h core.Handler, paths ...string) {
	_, addr := coretest.Serve(b, h, core.Options{Loops: 1})
	cs := make([]*client, len(paths))
	for i := range cs {
		cs[i] = dial(b, addr)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i, p := range paths {
		cs[i].get(p + "?n=" + strconv.Itoa(b.N))
	}
	for _, c := range cs {
		if _, body := c.response(); body != "ok" {
			b.Fatal(body)
		}
	}
}

func iterations(c *core.Ctx) int {
	n, _ := strconv.Atoi(c.Query("n"))
	return n
}

// BenchmarkTopicPingPong: two handlers on one loop take turns through two topics; an op is one
// turn each, so two parks, two publishes (posts to the loop itself) and two resumes.
func BenchmarkTopicPingPong(b *testing.B) {
	ping, pong := NewTopic[int](1), NewTopic[int](1)
	inHandlers(b, func(c *core.Ctx) {
		n := uint64(iterations(c))
		for i := range n {
			if c.Path() == "/ping" {
				ping.Publish(0)
				pong.Next(c, i, 0)
			} else {
				ping.Next(c, i, 0)
				pong.Publish(0)
			}
		}
		c.WriteString("ok")
	}, "/ping", "/pong")
}

// BenchmarkPublishFromGoroutine: another goroutine publishes, the handler wakes on its loop and
// tells the goroutine, which publishes again: the round trip of a wake-up across threads.
func BenchmarkPublishFromGoroutine(b *testing.B) {
	tp := NewTopic[int](1)
	woke := make(chan struct{}, 1)
	var wg sync.WaitGroup
	inHandlers(b, func(c *core.Ctx) {
		n := uint64(iterations(c))
		wg.Go(func() {
			for range n {
				tp.Publish(0)
				<-woke
			}
		})
		for i := range n {
			tp.Next(c, i, 0)
			woke <- struct{}{} // buffered: never blocks the loop
		}
		c.WriteString("ok")
	}, "/")
	wg.Wait()
}

// BenchmarkOnNextPingPong is BenchmarkTopicPingPong with the pong side in continuation form.
func BenchmarkOnNextPingPong(b *testing.B) {
	ping, pong := NewTopic[int](1), NewTopic[int](1)
	var k func(c *core.Ctx, _ []int, last uint64, _ error)
	var left int
	k = func(c *core.Ctx, _ []int, last uint64, _ error) {
		pong.Publish(0)
		if left--; left == 0 {
			c.WriteString("ok")
			return
		}
		ping.OnNext(c, last, 0, k)
	}
	inHandlers(b, func(c *core.Ctx) {
		n := uint64(iterations(c))
		if c.Path() == "/pong" {
			left = int(n)
			ping.OnNext(c, 0, 0, k)
			return
		}
		for i := range n {
			ping.Publish(0)
			pong.Next(c, i, 0)
		}
		c.WriteString("ok")
	}, "/ping", "/pong")
}

// BenchmarkDo: a call on the worker pool and the resume, an empty fn.
func BenchmarkDo(b *testing.B) {
	inHandlers(b, func(c *core.Ctx) {
		for range iterations(c) {
			Do(c, func() {})
		}
		c.WriteString("ok")
	}, "/")
}
