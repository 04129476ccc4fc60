// Package peer holds what every benchmark server shares, so that the servers differ only in how
// they serve: the command line (-addr, -file), the ready line the driver waits for, the stop
// signals, the long-poll gate and the download payload.
package peer

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
)

// Hello is the body of GET /hello.
const Hello = "Hello World"

// StdHello is the plain net/http handler of GET /std/hello: the hello answer written for
// net/http, which each server runs the way it runs such handlers (net/http and nbio natively,
// dwell through router.HandleHTTP, fasthttp through fasthttpadaptor).
var StdHello http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, Hello)
})

// Released is the body every parked GET /poll receives once POST /release arrives.
const Released = "released"

// Flags is the command line every benchmark server accepts.
type Flags struct {
	// Addr is the TCP address to listen on.
	Addr string
	// File is the path served at GET /file.
	File string
	// CPUProfile, when set, is where the server writes a CPU profile of its life from
	// ParseFlags to WaitForStop, for `go tool pprof` (the driver never sets it).
	CPUProfile string
	// AccessLog is where the servers that log every request (dwell-mw, dwell-metrics) write
	// their access log: /dev/null unless set (the driver never sets it), so that the figures
	// hold what the log costs the server — formatting each line, batching, the write(2) of
	// each batch — and not what a file system costs to keep the bytes, which is the
	// machine's and varies with it (see docs/operations.md).
	AccessLog string
}

// ParseFlags parses -addr (default 127.0.0.1:8080), -file, -cpuprofile and -accesslog from
// os.Args. A missing -file is fatal because the driver always passes one and a server without
// it would answer 404s that wrk counts as requests.
func ParseFlags() Flags {
	var f Flags
	flag.StringVar(&f.Addr, "addr", "127.0.0.1:8080", "TCP address to listen on")
	flag.StringVar(&f.File, "file", "", "file served at GET /file (required)")
	flag.StringVar(&f.CPUProfile, "cpuprofile", "", "write a CPU profile to `file` until the server stops")
	flag.StringVar(&f.AccessLog, "accesslog", os.DevNull, "`file` the access log is appended to, by the servers that keep one")
	flag.Parse()
	if f.File == "" {
		fmt.Fprintln(os.Stderr, "-file is required")
		os.Exit(2)
	}
	if _, err := os.Stat(f.File); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if f.CPUProfile != "" {
		pf, err := os.Create(f.CPUProfile)
		if err == nil {
			err = pprof.StartCPUProfile(pf)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		profile = pf
	}
	return f
}

// profile is the -cpuprofile file while the profile runs.
var profile *os.File

// stop receives SIGINT and SIGTERM from the moment Ready announces the server, so that a
// signal sent right after the announcement reaches WaitForStop instead of killing the process.
var stop = make(chan os.Signal, 1)

// Ready prints the line the driver waits for. Call it only once the server accepts connections.
func Ready(addr string) {
	ready("http", addr)
}

func ready(scheme, addr string) {
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	fmt.Printf("listening %s://%s\n", scheme, addr)
}

// OpenAccessLog opens f.AccessLog for appending, creating it if need be; it exits if it cannot.
func (f Flags) OpenAccessLog() *os.File {
	out, err := os.OpenFile(f.AccessLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	return out
}

// WaitForStop blocks until SIGINT or SIGTERM arrives after Ready, then ends the -cpuprofile.
func WaitForStop() {
	<-stop
	signal.Stop(stop)
	if profile != nil {
		pprof.StopCPUProfile()
		profile.Close()
	}
}

// Gate is what GET /poll waits on: every Release answers all waiters at once and arms a fresh
// gate for the next ones. A closed channel wakes any number of goroutines with one operation and
// costs nothing per waiter, which is the idiomatic net/http and fasthttp long poll.
type Gate struct {
	mu sync.Mutex
	ch chan struct{}
}

// NewGate returns an armed gate.
func NewGate() *Gate {
	return &Gate{ch: make(chan struct{})}
}

// Wait returns the channel that the next Release closes.
func (g *Gate) Wait() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ch
}

// Release wakes every current waiter.
func (g *Gate) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.ch)
	g.ch = make(chan struct{})
}

// DownloadSize parses the n query parameter of GET /download. It refuses negative or absent
// values so that a typo in a benchmark fails loudly instead of timing an empty body.
func DownloadSize(q string) (int64, error) {
	n, err := strconv.ParseInt(q, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("n must be a byte count, got %q", q)
	}
	return n, nil
}

// zeroChunk is the block downloads are cut from: big enough that a write is one large syscall,
// small enough to stay in cache.
var zeroChunk = make([]byte, 64<<10)

// Payload is an io.Reader of n zero bytes that never allocates, for servers that stream from a
// reader (fasthttp's SetBodyStream, nbio's ReadFrom).
type Payload struct{ left int64 }

// NewPayload returns a reader of n bytes.
func NewPayload(n int64) *Payload { return &Payload{left: n} }

// Read implements io.Reader.
func (p *Payload) Read(b []byte) (int, error) {
	if p.left == 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	n := copy(b, zeroChunk)
	p.left -= int64(n)
	return n, nil
}

// WriteTo implements io.WriterTo so io.Copy writes whole 64 KiB chunks without an extra buffer.
func (p *Payload) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for p.left > 0 {
		chunk := zeroChunk
		if int64(len(chunk)) > p.left {
			chunk = chunk[:p.left]
		}
		n, err := w.Write(chunk)
		total += int64(n)
		p.left -= int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// Count reads r to the end through buf and returns how many bytes it held, so a body is counted
// as it arrives and never held whole.
func Count(r io.Reader, buf []byte) (int64, error) {
	var total int64
	for {
		n, err := r.Read(buf)
		total += int64(n)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}
