package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/bench/internal/proc"
)

// The HTTPS side of the load tool: idle and park take -tls (each connection completes a full
// handshake before its request), and tls-handshake opens connections in a loop:
//
//	load tls-handshake -addr A -pid P -path /hello -c 8 -warm 1s -d 4s [-resume] [-curves x25519|default] -cert FILE
//
// The client is crypto/tls with its defaults but for what the figures fix: the key exchange
// (-curves: X25519 alone, or Go's default preferences, X25519MLKEM768 first), ALPN http/1.1
// (an HTTP/1.1 client's offer), and the server's certificate, which is checked by pinning
// (the leaf must be -cert's) rather than by chain verification, a cost of the client's that
// the server's figures do not need. The signature over the handshake is verified either way.

// tlsFlags are the client's TLS settings.
type tlsFlags struct {
	on     bool
	cert   string
	curves string
}

// register defines -cert and -curves, and -tls when TLS is optional (idle, park).
func (t *tlsFlags) register(fs *flag.FlagSet, optional bool) {
	if optional {
		fs.BoolVar(&t.on, "tls", false, "speak TLS: a full handshake on each connection before its request")
	} else {
		t.on = true
	}
	fs.StringVar(&t.cert, "cert", "", "the server's PEM certificate, pinned (empty: not checked)")
	fs.StringVar(&t.curves, "curves", "x25519", "key exchange offered: x25519, or default (Go's, X25519MLKEM768 first)")
}

// config returns the client configuration, or nil without TLS.
func (t *tlsFlags) config() (*tls.Config, error) {
	if !t.on {
		return nil, nil
	}
	cfg := &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}}
	switch strings.ToLower(t.curves) {
	case "x25519":
		cfg.CurvePreferences = []tls.CurveID{tls.X25519}
	case "default", "":
	default:
		return nil, fmt.Errorf("-curves %q: x25519 or default", t.curves)
	}
	if t.cert != "" {
		b, err := os.ReadFile(t.cert)
		if err != nil {
			return nil, err
		}
		blk, _ := pem.Decode(b)
		if blk == nil || blk.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("%s: no PEM certificate", t.cert)
		}
		want := blk.Bytes
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 || !bytes.Equal(cs.PeerCertificates[0].Raw, want) {
				return errors.New("load: the server's certificate is not -cert's")
			}
			return nil
		}
	}
	return cfg, nil
}

// negotiated names what a connection agreed on: "TLS 1.3, TLS_AES_128_GCM_SHA256, X25519".
func negotiated(cs tls.ConnectionState) string {
	return fmt.Sprintf("%s, %s, %s", tls.VersionName(cs.Version), tls.CipherSuiteName(cs.CipherSuite), cs.CurveID)
}

// secure runs a TLS handshake on a held connection and puts the TLS layer in its place. The
// caller's deadline bounds it.
func secure(h *held, cfg *tls.Config) (string, error) {
	tc := tls.Client(h.c, cfg)
	if err := tc.Handshake(); err != nil {
		return "", err
	}
	h.c = tc
	h.br.Reset(tc)
	return negotiated(tc.ConnectionState()), nil
}

// tlsDial returns how the release connection of park is opened: plain, or over TLS.
func tlsDial(addr string, cfg *tls.Config) func() (net.Conn, error) {
	nd := &net.Dialer{Timeout: 5 * time.Second}
	if cfg == nil {
		return func() (net.Conn, error) { return nd.Dial("tcp", addr) }
	}
	return func() (net.Conn, error) { return tls.DialWithDialer(nd, "tcp", addr, cfg) }
}

// tlsHandshakeResult is what tls-handshake prints.
type tlsHandshakeResult struct {
	Mode    string  `json:"mode"`
	Path    string  `json:"path"`
	Workers int     `json:"workers"`
	Resume  bool    `json:"resume"`
	Seconds float64 `json:"seconds"`
	// Handshakes are the connections completed (handshake, request, answer, close) during the
	// measurement; Resumed those of them whose handshake resumed a session.
	Handshakes  int64   `json:"handshakes"`
	Resumed     int64   `json:"resumed"`
	ResumedFrac float64 `json:"resumed_frac"`
	PerSec      float64 `json:"handshakes_per_sec"`
	CPUns       int64   `json:"cpu_ns"`
	CPUusPerHS  float64 `json:"cpu_us_per_handshake"`
	OtherPct    float64 `json:"other_pct"`
	ClientPct   float64 `json:"client_pct"`
	// Negotiated counts the connections of the whole run by what they agreed on.
	Negotiated map[string]int64 `json:"negotiated"`
}

// runTLSHandshake has -c workers each open a connection, complete a TLS handshake, send one
// GET and read its answer, and close (close_notify, then FIN), again and again: with -resume
// from a shared session cache, so that after the first every handshake offers a ticket. After
// the warm-up, for -d, it counts the connections and reads the server's CPU time at both ends.
func runTLSHandshake(ctx context.Context, args []string) (any, error) {
	var (
		cf        common
		tf        tlsFlags
		workers   int
		dur, warm time.Duration
		resume    bool
		serverCPU int
	)
	fs := flag.NewFlagSet("tls-handshake", flag.ExitOnError)
	cf.register(fs, "/hello")
	tf.register(fs, false)
	fs.IntVar(&workers, "c", 8, "connections in flight")
	fs.DurationVar(&warm, "warm", time.Second, "warm-up before the measurement, same load")
	fs.DurationVar(&dur, "d", 4*time.Second, "measurement")
	fs.BoolVar(&resume, "resume", false, "resume sessions (a tls.ClientSessionCache shared by the workers)")
	fs.IntVar(&serverCPU, "server-cpu", 0, "the server's CPU, for the noise figure")
	fs.Parse(args)
	if cf.pid == 0 || workers <= 0 || dur <= 0 {
		return nil, fmt.Errorf("-pid, -c and -d are required")
	}
	cfg, err := tf.config()
	if err != nil {
		return nil, err
	}
	if resume {
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(64)
	}
	// No source addresses: connect's own port choice reuses loopback TIME_WAIT ports
	// (net.ipv4.tcp_tw_reuse), where a bound source address would run out of them.
	d := &dialer{addr: cf.addr, timeout: 5 * time.Second}
	req := request("GET", cf.path, cf.addr, -1)

	var (
		done, resumed atomic.Int64
		stop          atomic.Bool
		mu            sync.Mutex
		first         error
		neg           = map[string]int64{}
		wg            sync.WaitGroup
	)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range workers {
		wg.Go(func() {
			mine := map[string]int64{}
			br := bufio.NewReaderSize(nil, 2048)
			for !stop.Load() && runCtx.Err() == nil {
				name, res, err := handshakeOnce(runCtx, d, cfg, br, req)
				if err != nil {
					if runCtx.Err() == nil {
						mu.Lock()
						if first == nil {
							first = err
						}
						mu.Unlock()
						cancel()
					}
					break
				}
				mine[name]++
				if res {
					resumed.Add(1)
				}
				done.Add(1)
			}
			mu.Lock()
			for k, v := range mine {
				neg[k] += v
			}
			mu.Unlock()
		})
	}
	type mark struct {
		t               time.Time
		cpu, busy, self int64
		n, resumedSoFar int64
		cpuErr          error
	}
	take := func() mark {
		m := mark{t: time.Now(), self: selfCPU(), n: done.Load(), resumedSoFar: resumed.Load()}
		m.cpu, m.cpuErr = proc.CPU(cf.pid)
		m.busy, _ = proc.CPUBusyTasks(serverCPU)
		return m
	}
	sleep := func(d time.Duration) {
		select {
		case <-time.After(d):
		case <-runCtx.Done():
		}
	}
	sleep(warm)
	m0 := take()
	sleep(dur)
	m1 := take()
	stop.Store(true)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if err := errors.Join(ctx.Err(), m0.cpuErr, m1.cpuErr); err != nil {
		return nil, err
	}
	n := m1.n - m0.n
	if n <= 0 {
		return nil, errors.New("no connection completed during the measurement")
	}
	span := m1.t.Sub(m0.t)
	res := &tlsHandshakeResult{
		Mode: "tls-handshake", Path: cf.path, Workers: workers, Resume: resume, Seconds: span.Seconds(),
		Handshakes: n, Resumed: m1.resumedSoFar - m0.resumedSoFar, PerSec: float64(n) / span.Seconds(),
		CPUns: m1.cpu - m0.cpu, Negotiated: neg,
		OtherPct:  max(0, float64(m1.busy-m0.busy-(m1.cpu-m0.cpu))/float64(span)*100),
		ClientPct: float64(m1.self-m0.self) / float64(span) * 100,
	}
	res.ResumedFrac = float64(res.Resumed) / float64(n)
	res.CPUusPerHS = float64(res.CPUns) / 1e3 / float64(n)
	logf("tls-handshake: %d connections (%.1f%% resumed), %.0f/s, %.1f µs server CPU each, client CPU %.0f%%; %v",
		n, res.ResumedFrac*100, res.PerSec, res.CPUusPerHS, res.ClientPct, neg)
	return res, nil
}

// handshakeOnce is one connection of tls-handshake: dial, handshake, GET, answer, close. It
// returns what the connection negotiated and whether it resumed a session.
func handshakeOnce(ctx context.Context, d *dialer, cfg *tls.Config, br *bufio.Reader, req []byte) (string, bool, error) {
	tc, err := tlsRequest(ctx, d, cfg, br, req, 5*time.Second)
	if err != nil {
		return "", false, err
	}
	defer tc.Close()
	cs := tc.ConnectionState()
	return negotiated(cs), cs.DidResume, nil
}

// tlsRequest dials, completes a TLS handshake and one request, whose answer must be the
// hello, all within patience, and returns the open connection, br reading from it.
func tlsRequest(ctx context.Context, d *dialer, cfg *tls.Config, br *bufio.Reader, req []byte, patience time.Duration) (*tls.Conn, error) {
	c, err := d.dial()
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(patience))
	tc := tls.Client(c, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		tc.Close()
		return nil, fmt.Errorf("handshake: %w", err)
	}
	br.Reset(tc)
	if _, err := exchange(tc, br, req, peer.Hello); err != nil {
		tc.Close()
		return nil, err
	}
	return tc, nil
}
