package nethttp

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// The bridge's benchmarks serve one plain net/http handler — the hello of bench/ — through
// Handler and with net/http's own server, in the same process, over loopback keep-alive
// connections whose client allocates nothing, one request at a time: the latency of a lone
// request, which crosses to a goroutine and back (see Handler). Run them with:
//
//	go test -run '^$' -bench 'StdHello(Bridge|NetHTTP)' -benchtime 20000x ./router/
//	go test -run '^$' -bench 'StdHelloRatio' -benchtime 20x ./router/
//
// BenchmarkStdHelloRatio interleaves the two servers, 500 requests to each per iteration, and
// reports the ratios of their times and of the process's CPU time (client included, the same
// for both) per request: on a busy machine it is the comparison to trust. Throughput under
// concurrent load is bench/'s "std" figure.
//
// BenchmarkStdUploadBridge and BenchmarkStdDownloadBridge time the calls the goroutine makes
// to the loop: a small body read whole (its bytes came with the head, so the read never waits
// for the client) and a response of 24 KiB written in 8 KiB pieces, each a call (RoundTripper
// needs a response that one read takes whole).

var stdHello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, "Hello World")
})

const helloRequest = "GET /std/hello HTTP/1.1\r\nHost: bench\r\n\r\n"

func serveBridgeHello(b *testing.B) *coretest.RoundTripper {
	_, addr := coretest.Serve(b, Handler(stdHello), core.Options{})
	return coretest.NewRoundTripper(b, addr, helloRequest)
}

func serveNetHTTPHello(b *testing.B) *coretest.RoundTripper {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: stdHello}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return coretest.NewRoundTripper(b, ln.Addr().String(), helloRequest)
}

func BenchmarkStdHelloBridge(b *testing.B) {
	rt := serveBridgeHello(b)
	b.ReportAllocs()
	for b.Loop() {
		rt.Do(b)
	}
}

func BenchmarkStdHelloNetHTTP(b *testing.B) {
	rt := serveNetHTTPHello(b)
	b.ReportAllocs()
	for b.Loop() {
		rt.Do(b)
	}
}

func BenchmarkStdHelloRatio(b *testing.B) {
	bridge, std := serveBridgeHello(b), serveNetHTTPHello(b)
	var tb, ts, cb, cs time.Duration
	const batch = 500
	for b.Loop() {
		for _, s := range []struct {
			rt     *coretest.RoundTripper
			t, cpu *time.Duration
		}{{bridge, &tb, &cb}, {std, &ts, &cs}} {
			start, cpu0 := time.Now(), cpuTime()
			for range batch {
				s.rt.Do(b)
			}
			*s.t += time.Since(start)
			*s.cpu += cpuTime() - cpu0
		}
	}
	n := float64(b.N * batch)
	b.ReportMetric(float64(tb.Nanoseconds())/n, "bridge-ns/req")
	b.ReportMetric(float64(ts.Nanoseconds())/n, "nethttp-ns/req")
	b.ReportMetric(float64(tb)/float64(ts), "time-ratio")
	b.ReportMetric(float64(cb)/float64(cs), "cpu-ratio")
}

// stdUpload reads the body whole and answers with its size.
var stdUpload = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintf(w, "%d", len(b))
})

// stdDownload writes 24 KiB in 8 KiB pieces.
var stdDownload = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/octet-stream")
	piece := make([]byte, 8<<10)
	for range 3 {
		w.Write(piece)
	}
})

func BenchmarkStdUploadBridge(b *testing.B) {
	_, addr := coretest.Serve(b, Handler(stdUpload), core.Options{})
	body := strings.Repeat("u", 100)
	rt := coretest.NewRoundTripper(b, addr, "POST /std/upload HTTP/1.1\r\nHost: bench\r\n"+
		"Content-Length: 100\r\n\r\n"+body)
	b.ReportAllocs()
	for b.Loop() {
		rt.Do(b)
	}
}

func BenchmarkStdDownloadBridge(b *testing.B) {
	_, addr := coretest.Serve(b, Handler(stdDownload), core.Options{})
	rt := coretest.NewRoundTripper(b, addr, "GET /std/download HTTP/1.1\r\nHost: bench\r\n\r\n")
	b.ReportAllocs()
	for b.Loop() {
		rt.Do(b)
	}
}

// cpuTime returns the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
