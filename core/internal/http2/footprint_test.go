//go:build !race && linux && !dwell_portable

package http2

import (
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/dwellhttp/dwell/core/internal/h2"
	"github.com/dwellhttp/dwell/core/internal/serve"
	"github.com/dwellhttp/dwell/internal/bufpool"
	"github.com/dwellhttp/dwell/internal/testclient"
)

// TestH2ParkedFootprint: a stream parked in its handler costs what a parked HTTP/1.1 request
// does — its Ctx, its coroutine, its stream (in place of a connection's Socket) — within 4 KiB
// beyond its connection: 2,000 streams parked, 100 on each of 20 connections, in a process of
// its own as TestParkedFootprint is measured.
func TestH2ParkedFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	if !testclient.InProcessOfItsOwn(t, "TestH2ParkedFootprint") {
		return
	}
	const conns, perConn = 20, h2MaxStreams
	var parked atomic.Int64
	_, addr := startServer(t, func(c *serve.Ctx) {
		parked.Add(1)
		c.Suspend(0)
	}, serve.Options{DisableDeferAccept: true, StallThreshold: measureStallThreshold})
	clients := make([]*h2client, conns)
	for i := range clients {
		c := dialH2(t, addr)
		c.until("the settings acknowledged", func() bool { return c.acks > 0 })
		clients[i] = c
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	poll := encodeFields(":method", "GET", ":scheme", "http", ":authority", "127.0.0.1:8080",
		":path", "/messages?after=0", "user-agent", "Go-http-client/2.0", "accept-encoding", "gzip")
	for _, c := range clients {
		var b []byte
		for id := uint32(1); id < 2*perConn; id += 2 {
			b = h2.AppendHeaders(b, id, true, poll, h2.MinMaxFrameSize)
		}
		c.write(b)
	}
	waitFor(t, "every stream parked", func() bool { return parked.Load() == conns*perConn })
	runtime.GC()
	runtime.ReadMemStats(&after)
	n := float64(conns * perConn)
	heap := float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / n
	stack := float64(int64(after.StackInuse)-int64(before.StackInuse)) / n
	t.Logf("heap %+.0f B, stacks %+.0f B per parked stream: %.0f B", heap, stack, heap+stack)
	if heap+stack > 4096 {
		t.Errorf("a parked stream costs %.0f B, over 4 KiB", heap+stack)
	}
}

// TestH2IdleFootprint: an idle HTTP/2 connection, after a request, holds its Socket, its
// hand-over and the HTTP/2 state — HPACK's table and its map of streams, emptied — and no
// goroutine and no buffer of the loop's: 1.6 KiB at most, nginx's figure for h2c.
func TestH2IdleFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	const conns = 2000
	s, addr := startServer(t, helloHandler, serve.Options{DisableDeferAccept: true, StallThreshold: measureStallThreshold})
	// What a connection sends — the preface, its settings, a GET — and how many bytes the
	// server answers with, learnt once on a connection of its own.
	req := append([]byte(h2.ClientPreface), h2.AppendSettings(nil)...)
	req = h2.AppendHeaders(req, 1, true, encodeFields(":method", "GET", ":scheme", "http",
		":authority", "localhost", ":path", "/"), h2.MinMaxFrameSize)
	probe := dialH2(t, addr)
	probe.write(req[len(h2.ClientPreface)+h2.HeaderLen:])
	size := 0
	for probe.streams[1] == nil || !probe.streams[1].end || probe.acks == 0 {
		_, p, ok := probe.frame()
		if !ok {
			t.Fatal("the probe's connection closed")
		}
		size += h2.HeaderLen + len(p)
	}
	raw := make([]net.Conn, conns)
	for i := range raw {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		raw[i] = c
	}
	waitFor(t, "every connection accepted", func() bool { return openConns(s) == conns+1 })
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()
	resp := make([]byte, size)
	for _, c := range raw {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, resp); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	// The connections were accepted before the baseline: add what each held then, its Socket.
	per := float64(int64(after.HeapInuse)-int64(before.HeapInuse))/conns + float64(bufpool.SizeClass(int(unsafe.Sizeof(serve.Socket{}))))
	t.Logf("heap %.0f B per idle HTTP/2 connection, its conn included", per)
	if per > 1.6*1024 {
		t.Errorf("an idle HTTP/2 connection costs %.0f B, over 1.6 KiB", per)
	}
	if g := runtime.NumGoroutine() - goroutines; g >= conns/100 {
		t.Errorf("%d goroutines more with %d idle HTTP/2 connections", g, conns)
	}
}
