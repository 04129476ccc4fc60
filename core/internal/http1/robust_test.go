package http1

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// mutate damages a valid request: flips, inserts, deletes or duplicates bytes, or cuts it short.
func mutate(r *rand.Rand, s string) string {
	b := []byte(s)
	for range 1 + r.IntN(4) {
		if len(b) == 0 {
			break
		}
		i := r.IntN(len(b))
		switch r.IntN(5) {
		case 0:
			b[i] = byte(r.IntN(256))
		case 1:
			b = append(b[:i], append([]byte{byte(r.IntN(256))}, b[i:]...)...)
		case 2:
			b = append(b[:i], b[i+1:]...)
		case 3:
			b = append(b[:i], append(append([]byte{}, b[i:min(len(b), i+10)]...), b[i:]...)...)
		case 4:
			b = b[:i]
		}
	}
	return string(b)
}

// TestGarbageNeverCrashes sends 2,000 random and damaged inputs. Each is answered with a status, or
// the connection is closed; afterwards the server still serves.
func TestGarbageNeverCrashes(t *testing.T) {
	_, addr := startServer(t, bodyEcho, serve.Options{HeaderTimeout: time.Second, BodyTimeout: time.Second})
	r := rand.New(rand.NewPCG(7, 8))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := range 2000 {
		var in string
		if i%4 == 0 {
			raw := make([]byte, r.IntN(512))
			for j := range raw {
				raw[j] = byte(r.IntN(256))
			}
			in = string(raw)
		} else {
			in = mutate(r, randomRequest(r))
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(patience))
			io.WriteString(c, in)
			c.(*net.TCPConn).CloseWrite()
			io.Copy(io.Discard, c) // until the server closes
		}()
	}
	wg.Wait()
	c := dial(t, addr)
	c.Send("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nok")
	if resp, _ := c.Response("POST"); resp.StatusCode != 200 {
		t.Fatalf("after the garbage: %d", resp.StatusCode)
	}
}

// TestResetsMidRequest resets connections in the middle of a head and of a body.
func TestResetsMidRequest(t *testing.T) {
	reading := make(chan struct{}, 1)
	done := make(chan error, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		if c.Method() == "GET" {
			c.WriteString("whole")
			return
		}
		reading <- struct{}{}
		_, err := io.ReadAll(readerFunc(c.ReadBody))
		done <- err
	}, serve.Options{})
	reset := func(c *rawConn) {
		c.SetLinger(0) // close sends RST
		c.Close()
	}
	// A whole request and half of the next, in one write: once the first is answered, the
	// server has read the half head too (in the same read), and waits for its end.
	c := dial(t, addr)
	c.Send("GET /whole HTTP/1.1\r\nHost: h\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\nX-Half")
	if body, err := readResp(c); body != "whole" {
		t.Fatalf("%q %v", body, err)
	}
	reset(c)
	c = dial(t, addr)
	c.Send("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nonly part")
	receive(t, "the handler reading the body", reading)
	reset(c)
	if err := receive(t, "the handler reading a reset body to return", done); err == nil {
		t.Fatal("a body cut by a reset read without error")
	}
	c = dial(t, addr)
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, _ := c.Response("GET"); resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
}

// TestManyKeepAliveConnections: 1,000 concurrent keep-alive connections × 20 requests each.
func TestManyKeepAliveConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	_, addr := startServer(t, func(c *serve.Ctx) { c.WriteString(c.Path()) }, serve.Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for i := range 1000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(patience))
			rc := &rawConn{T: t, TCPConn: c.(*net.TCPConn), R: newReader(c)}
			for j := range 20 {
				path := fmt.Sprintf("/%d/%d", i, j)
				io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: h\r\n\r\n")
				body, err := readResp(rc)
				if err != nil || body != path {
					errs <- fmt.Errorf("%s: %q %v", path, body, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestSlowClientsDoNotDelayOthers: 1,000 connections trickling their heads do not hold up a
// normal client: its requests are all answered while every slow client is still in the middle
// of its head, and the slow clients are answered once their heads end. How fast is for the
// benchmarks: on a small loaded machine a wall-clock bound here would fail for want of a
// processor, not for a fault of the server's. (A server that made the normal client wait for
// the slow ones would leave it waiting forever: their heads never end before it is done.)
func TestSlowClientsDoNotDelayOthers(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	// No header timeout: the slow clients are cut by nothing but their own end, so that the
	// order of events alone says who waited for whom.
	_, addr := startServer(t, helloHandler, serve.Options{HeaderTimeout: -1})
	slow := make([]*rawConn, 0, 1000)
	for range 1000 {
		c := dial(t, addr)
		slow = append(slow, c)
		c.Send("GET / HTTP/1.1\r\nHost: h\r\nX-Slow: ")
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	var turns atomic.Int64 // batches of 100 slow clients that have written a byte more
	go func() {
		defer close(stopped)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond): // pacing, not synchronisation
			}
			for _, c := range slow[i%10*100 : i%10*100+100] {
				c.Write([]byte("x"))
			}
			turns.Add(1)
		}
	}()
	// At least 50 requests, and for as long as it takes every slow client to trickle a byte
	// more twice.
	var worst time.Duration
	n := 0
	c := dial(t, addr)
	for ; n < 50 || turns.Load() < 20; n++ {
		start := time.Now()
		c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		if _, body := c.Response("GET"); body != "Hello World" {
			t.Fatal(body)
		}
		worst = max(worst, time.Since(start))
	}
	close(stop)
	<-stopped
	t.Logf("the slowest of %d normal requests among 1,000 slow clients took %v", n, worst)
	for i, c := range slow {
		c.Send("\r\n\r\n")
		if _, body := c.Response("GET"); body != "Hello World" {
			t.Fatalf("slow client %d: %q", i, body)
		}
	}
}
