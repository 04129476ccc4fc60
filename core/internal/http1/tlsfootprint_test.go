//go:build !race && linux && !dwell_portable

package http1

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// TestTLSIdleFootprint measures what an idle keep-alive TLS connection costs the server, after
// one request: heap in use and goroutine stacks per connection, with 1,000 of them, beside the
// same for plaintext. The clients run in a process of their own, so that only the server's
// memory is counted.
func TestTLSIdleFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	const n = 1000
	p := newPKI(t)
	plainHeap, plainStack := idleFootprint(t, p, n, false)
	tlsHeap, tlsStack := idleFootprint(t, p, n, true)
	t.Logf("idle keep-alive connection after one request: plaintext %d B heap + %d B stacks; TLS 1.3 %d B heap + %d B stacks",
		plainHeap, plainStack, tlsHeap, tlsStack)
}

func idleFootprint(t *testing.T, p *testPKI, n int, useTLS bool) (heap, stack int64) {
	o := serve.Options{DisableDeferAccept: true, StallThreshold: measureStallThreshold}
	if useTLS {
		o.TLSConfig = &tls.Config{Certificates: []tls.Certificate{p.cert(t, "localhost", false, "localhost")}}
	}
	s, addr := startServer(t, helloHandler, o)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.ca.Raw})
	cmd, in, out := startChild(t, "TestTLSFootprintClients",
		"DWELL_FOOTPRINT_CLIENTS="+addr+","+strconv.Itoa(n)+","+strconv.FormatBool(useTLS), nil)
	defer func() {
		in.Close()
		cmd.Wait()
	}()
	in.Write(ca)
	in.Write([]byte("\n-----\n"))
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("clients: %q, %v", line, err)
	}
	waitFor(t, "every connection open", func() bool { return openConns(s) == n })
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap = (int64(after.HeapInuse) - int64(before.HeapInuse)) / int64(n)
	stack = (int64(after.StackInuse) - int64(before.StackInuse)) / int64(n)
	return heap, stack
}

// TestTLSFootprintClients is the client process of TestTLSIdleFootprint: it opens the
// connections, makes one request on each, says "ready" and holds them until its input ends.
func TestTLSFootprintClients(t *testing.T) {
	arg := os.Getenv("DWELL_FOOTPRINT_CLIENTS")
	if arg == "" {
		t.Skip("the client process of TestTLSIdleFootprint")
	}
	f := strings.Split(arg, ",")
	addr, useTLS := f[0], f[2] == "true"
	n, _ := strconv.Atoi(f[1])
	r := bufio.NewReader(os.Stdin)
	var caPEM strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil || line == "-----\n" {
			break
		}
		caPEM.WriteString(line)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(caPEM.String()))
	conns := make([]net.Conn, 0, n)
	for range n {
		var c net.Conn
		var err error
		if useTLS {
			c, err = tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "localhost"})
		} else {
			c, err = net.Dial("tcp", addr)
		}
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(1)
		}
		fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			fmt.Println("request:", err)
			os.Exit(1)
		}
		resp.Body.Close()
		conns = append(conns, c)
	}
	fmt.Println("ready")
	r.ReadString('\n') // until the end of input
	for _, c := range conns {
		c.Close()
	}
}
