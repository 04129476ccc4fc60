//go:build linux && !dwell_portable

package http1

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestTLSRecordsThroughRing: on io_uring a TLS connection's records, once its handshake is
// done, go out through the ring's sends, not the socket's own writes (engine/tlsconn.go,
// sendOut): the responses of many requests, small and large, arrive whole and in order while
// the transport's write to the socket is not called once after the handshake.
func TestTLSRecordsThroughRing(t *testing.T) {
	var writes atomic.Int64
	engine.TLSWrite = func(fd int, p []byte) (int, netpoll.Errno) {
		writes.Add(1)
		return netpoll.Write(fd, p)
	}
	t.Cleanup(func() { engine.TLSWrite = netpoll.Write })
	pki, addr := startRingTLS(t)
	for _, tv := range tlsVersions {
		t.Run(tv.name, func(t *testing.T) {
			c, r := tlsDial(t, addr, pki.clientConfig(tv.v))
			get := func(path, want string) {
				t.Helper()
				fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
				if body, err := bodyOf(r); err != nil || body != want {
					t.Fatalf("GET %s: %d bytes, %v", path, len(body), err)
				}
			}
			get("/first", "small /first") // the handshake's flights are the socket's own writes
			before := writes.Load()
			for i := range 10 {
				get(fmt.Sprint("/", i), fmt.Sprint("small /", i))
				get("/big", string(ringBig))
			}
			if n := writes.Load() - before; n != 0 {
				t.Errorf("%d of the records' writes went to the socket itself after the handshake", n)
			}
		})
	}
}

// TestTLSShortSends: a ring send that sends less than its records (as one the connection's
// failure cuts short does) leaves the rest first in line for the next send, behind nothing
// sealed since: with every send cut to half of what it was given, the responses of many
// requests, small and large, still arrive whole and in order.
func TestTLSShortSends(t *testing.T) {
	var cut atomic.Int64
	defaultSend := engine.TLSSend
	t.Cleanup(func() { engine.TLSSend = defaultSend })
	engine.TLSSend = func(p *netpoll.Poller, fd int, iov *netpoll.IOVecs, b []byte) netpoll.Errno {
		if len(b) > 1 {
			b = b[:len(b)/2]
			cut.Add(1)
		}
		iov.Reset()
		iov.Append(b)
		return p.Send(fd, iov, false)
	}
	pki, addr := startRingTLS(t)
	for _, tv := range tlsVersions {
		t.Run(tv.name, func(t *testing.T) {
			c, r := tlsDial(t, addr, pki.clientConfig(tv.v))
			before := cut.Load()
			for i := range 5 {
				fmt.Fprintf(c, "GET /%d HTTP/1.1\r\nHost: x\r\n\r\nGET /big HTTP/1.1\r\nHost: x\r\n\r\n", i)
				if body, err := bodyOf(r); err != nil || body != fmt.Sprint("small /", i) {
					t.Fatalf("GET /%d: %q, %v", i, body, err)
				}
				if body, err := bodyOf(r); err != nil || body != string(ringBig) {
					t.Fatalf("GET /big after /%d: %d bytes, %v", i, len(body), err)
				}
			}
			if cut.Load() == before {
				t.Error("no send was cut short: the test did not reach the transport's sends")
			}
		})
	}
}

// ringBig is the body of GET /big from startRingTLS's server: 320 KB, several batches of records.
var ringBig = bytes.Repeat([]byte("0123456789abcdef"), 20_000)

// startRingTLS starts a TLS server of one loop on io_uring (or skips the test where io_uring
// cannot be used) that answers GET /big with ringBig and any other path with "small PATH".
func startRingTLS(t *testing.T) (*testPKI, string) {
	t.Helper()
	if p, err := netpoll.NewRingPoller(1); err != nil {
		t.Skipf("io_uring cannot be used here: %v", err)
	} else {
		p.Close()
	}
	pki := newPKI(t)
	_, addr := startTLS(t, pki, func(c *serve.Ctx) {
		if c.Path() == "/big" {
			c.Write(ringBig)
			return
		}
		c.WriteString("small " + c.Path())
	}, serve.Options{Loops: 1, Poller: "io_uring"})
	return pki, addr
}
