//go:build linux && !dwell_portable

package http1

import (
	"crypto/tls"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestHandshakesWaitForOpenConnections: new connections' TLS handshakes and a request on a
// connection already open, ready in the same turn, are not served in arrival order — the
// request first, the handshakes after, a turn's budget of them at a time — so that a storm of
// new clients cannot hold up the clients already connected (engine/tlsturn.go). The loop is held while
// the new clients' ClientHellos reach the listener's accept queue and the request reaches its
// socket (both read off the kernel, no timing), then let go: the request's handler runs before
// any handshake has begun, with every handshake queued; then all of them complete. The order
// rests on the poller reporting, in one wait, all that became ready while the loop was held:
// epoll does; io_uring posts a completion when the thread that armed its request next enters
// the kernel (ringpoll_linux.go, COOP_TASKRUN), which a thread busy with a client's handshake
// may not do for a while, so this test polls with epoll whatever DWELL_POLLER says.
func TestHandshakesWaitForOpenConnections(t *testing.T) {
	const storm = 20
	pki := newPKI(t)
	cert := pki.cert(t, "localhost", false, "localhost")
	var begun atomic.Int64 // handshakes that reached the server's certificate
	cfg := &tls.Config{GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		begun.Add(1)
		return &cert, nil
	}}
	type place struct {
		fd int
		l  *serve.Loop
	}
	first := make(chan place, 1)
	s, addr := startTLS(t, pki, func(c *serve.Ctx) {
		if c.Path() == "/first" {
			first <- place{int(c.Exchange.(*conn).FD), c.Loop}
		}
		c.WriteString(fmt.Sprintf("begun %d, queued %d", begun.Load(), c.Loop.TLS.Queued()))
	}, serve.Options{TLSConfig: cfg, StallThreshold: -1, Loops: 1, Poller: serve.PollerEpoll}) // one loop: one listening socket for the storm
	open, r := tlsDial(t, addr, pki.clientConfig(0))
	get := func(path string) string {
		t.Helper()
		if _, err := fmt.Fprintf(open, "GET %s HTTP/1.1\r\nHost: h\r\n\r\n", path); err != nil {
			t.Fatal(err)
		}
		return readBody(t, r)
	}
	get("/first")
	at := receive(t, "the connection's place", first)
	before := begun.Load()

	release := make(chan struct{})
	held := make(chan struct{})
	at.l.Post(func() { close(held); <-release })
	<-held
	var wg sync.WaitGroup
	failed := make(chan error, storm)
	for range storm {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := tls.Dial("tcp", addr, pki.clientConfig(0))
			if err != nil {
				failed <- err
				return
			}
			c.Close()
		}()
	}
	s.Mu.Lock()
	lfd := s.Listenings[0].FDs[0]
	s.Mu.Unlock()
	// A listener that defers accepting queues a connection once its first bytes, the
	// ClientHello, have come: tcpi_unacked is a listener's accept queue.
	waitFor(t, "the ClientHellos in the accept queue", func() bool {
		info, err := unix.GetsockoptTCPInfo(lfd, unix.IPPROTO_TCP, unix.TCP_INFO)
		return err == nil && info.Unacked == storm
	})
	if _, err := fmt.Fprintf(open, "GET /probe HTTP/1.1\r\nHost: h\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the request in its socket", func() bool {
		n, err := unix.IoctlGetInt(at.fd, unix.SIOCINQ)
		return err == nil && n > 0
	})
	close(release)
	if got, want := readBody(t, r), fmt.Sprintf("begun %d, queued %d", before, storm); got != want {
		t.Errorf("the request on the open connection was served with %q, want %q: before any new handshake", got, want)
	}
	wg.Wait()
	close(failed)
	for err := range failed {
		t.Errorf("a handshake of the storm: %v", err)
	}
	if got := begun.Load() - before; got != storm {
		t.Errorf("%d handshakes, want %d", got, storm)
	}
}
