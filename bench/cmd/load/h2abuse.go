package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http2"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/bench/internal/proc"
)

// The HTTP/2 abuse figures' side of the load tool: one attack for -d against the server while a
// normal client on a connection of its own asks GET -path every -pace and times each answer.
//
//	load h2-abuse -addr A -pid P -attack reset -d 10s [-conns 10] [-streams 100] [-attack-path /file] [-tls -cert FILE]
//
// h2-abuse is the normal client, the server's RSS sampler and the coordinator; the attacker is a
// child process of its own (load h2-attack, same flags), at a lower priority (-nice) on the same
// CPU, so that the normal client's latency is the server's and not a scheduler's: in one Go
// process the attacker's always-runnable goroutines would hold the normal client's wake-up back
// for up to a time slice, and at equal priority the kernel would too, now and then. The attacker
// prints what it did as JSON when h2-abuse stops it with SIGTERM.
//
// The attacks, each on -conns connections (10) that reconnect whenever the server closes one, as
// a real attacker would:
//
//	reset         HEADERS (a GET, END_STREAM) then RST_STREAM CANCEL at once, over and over (rapid
//	              reset, CVE-2023-44487); what the server sends is read and dropped
//	continuation  one HEADERS without END_HEADERS, then CONTINUATION frames of header fields for
//	              ever, never END_HEADERS (CVE-2024-27316)
//	settings      SETTINGS frames (ENABLE_PUSH 0), as fast as the server takes them; the socket is
//	              never read, so the ACKs pile up on the server's side
//	ping          PING frames the same way, the ACKs never read
//	priority      PRIORITY frames for ever new idle streams, each depending on the one before
//	empty-data    HEADERS of a GET without END_STREAM, then 0-length DATA frames on its stream,
//	              ending it after emptyDataPerStream of them and opening the next
//	window-update WINDOW_UPDATE frames of increment 1 on the connection (stream 0), as fast as the
//	              server takes them, reading what it sends (10 s of them stay far below the
//	              2^31-1 a window may reach: no overflow for the server to end the connection for)
//	zero-window   -conns connections (100) each announcing SETTINGS_INITIAL_WINDOW_SIZE 0 and
//	              opening -streams GETs of -attack-path (100), then reading what comes and never
//	              sending WINDOW_UPDATE: the answers cannot move, and the server holds them
//	tiny-window   SETTINGS_INITIAL_WINDOW_SIZE 1 and -streams GETs of -attack-path (10) kept open,
//	              reading all the time and giving back every DATA frame's bytes at once, a
//	              WINDOW_UPDATE of its length on its stream (unless the frame ended it) and one
//	              on the connection, so that the server can send each answer only a byte at a
//	              time (a frame out and a frame in for every byte); a stream that ends or is
//	              reset is replaced by a new one, and after a GOAWAY the attacker leaves the
//	              connection once the streams it left have ended
//
// Frames are written with golang.org/x/net/http2's Framer and hpack, as the other h2 modes' are.
// abuseFlags are the flags h2-abuse and h2-attack share; h2-abuse passes them on.
type abuseFlags struct {
	addr       string
	attack     string
	attackPath string
	conns      int
	streams    int
	tls        tlsFlags
}

func (f *abuseFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8080", "server address")
	fs.StringVar(&f.attack, "attack", attackReset, "the attack: "+strings.Join(attacks, ", "))
	fs.StringVar(&f.attackPath, "attack-path", "/hello", "the path the attack's requests ask for")
	fs.IntVar(&f.conns, "conns", 0, "attacker connections (0: 10, or 100 for zero-window)")
	fs.IntVar(&f.streams, "streams", 0, "zero-window, tiny-window: streams open on each connection, at most the server's limit (0: 100 for zero-window, 10 for tiny-window)")
	f.tls.register(fs, true)
}

// defaults fills in the attack's connections and streams where the flags left them 0.
func (f *abuseFlags) defaults() {
	if f.conns <= 0 {
		f.conns = 10
		if f.attack == attackZeroWindow {
			f.conns = 100
		}
	}
	if f.streams <= 0 {
		f.streams = 10
		if f.attack == attackZeroWindow {
			f.streams = 100
		}
	}
}

// args are the flags again, for the attacker's command line.
func (f *abuseFlags) args() []string {
	a := []string{"-addr", f.addr, "-attack", f.attack, "-attack-path", f.attackPath,
		"-conns", strconv.Itoa(f.conns), "-streams", strconv.Itoa(f.streams), "-curves", f.tls.curves}
	if f.tls.on {
		a = append(a, "-tls")
	}
	if f.tls.cert != "" {
		a = append(a, "-cert", f.tls.cert)
	}
	return a
}

// h2AbuseResult is what h2-abuse prints.
type h2AbuseResult struct {
	Mode    string  `json:"mode"`
	Attack  string  `json:"attack"`
	Seconds float64 `json:"seconds"`
	// The server's CPU time over the attack, and how busy its CPU was with other tasks.
	CPUns    int64   `json:"cpu_ns"`
	CPUPct   float64 `json:"cpu_pct"`
	OtherPct float64 `json:"other_pct"`
	// The server's RSS before the attack, its peak (sampled every -sample) and at the end.
	RSSBefore int64 `json:"rss_before_bytes"`
	RSSPeak   int64 `json:"rss_peak_bytes"`
	RSSEnd    int64 `json:"rss_end_bytes"`
	RSSGrowth int64 `json:"rss_peak_growth_bytes"`
	Samples   int   `json:"rss_samples"`
	// Normal is the normal client's account, Attacker the attacker's.
	Normal   normalResult    `json:"normal"`
	Attacker *h2AttackResult `json:"attacker"`
}

// normalResult is the normal client's account: every request it sent during the attack was
// answered (a latency) or failed (no answer within -timeout, a reset, or the connection lost;
// it then reconnects). A slot at which it had no connection and could not make one counts as
// a failed request too.
type normalResult struct {
	PaceUs     float64 `json:"pace_us"`
	Sent       int     `json:"sent"`
	Answered   int     `json:"answered"`
	Failed     int     `json:"failed"`
	Reconnects int     `json:"reconnects"`
	P50us      float64 `json:"p50_us"`
	P99us      float64 `json:"p99_us"`
	P999us     float64 `json:"p999_us"`
	MaxUs      float64 `json:"max_us"`
	FirstFail  string  `json:"first_failure,omitempty"`
	Negotiated string  `json:"negotiated,omitempty"`
}

// normalClient asks GET path on a connection of its own, one request at a time.
type normalClient struct {
	addr, path, scheme string
	cfg                *tls.Config
	timeout            time.Duration
	h                  *h2Conn
	res                normalResult
	lats               []time.Duration
}

// connect opens the client's connection and waits for the server's SETTINGS.
func (n *normalClient) connect() error {
	nd := net.Dialer{Timeout: n.timeout}
	c, err := nd.Dial("tcp", n.addr)
	if err != nil {
		return err
	}
	c.SetDeadline(time.Now().Add(n.timeout))
	var conn net.Conn = c
	if n.cfg != nil {
		tc := tls.Client(c, n.cfg)
		if err := tc.Handshake(); err != nil {
			c.Close()
			return err
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
			tc.Close()
			return fmt.Errorf("ALPN chose %q, not h2", p)
		}
		n.res.Negotiated = negotiated(tc.ConnectionState()) + ", h2"
		conn = tc
	}
	h := newH2Conn(conn, bufio.NewReaderSize(conn, 16<<10), n.scheme, n.addr)
	err = h.start()
	for err == nil && !h.settings {
		_, _, _, err = h.read(map[uint32]*h2Response{})
	}
	if err != nil {
		conn.Close()
		return err
	}
	n.h = h
	return nil
}

// get sends one request and reads until its answer is complete: a GOAWAY that still covers
// the stream lets the answer come, and then the connection is given up for a new one.
func (n *normalClient) get() (time.Duration, error) {
	h := n.h
	id := h.next
	t0 := time.Now()
	h.c.SetDeadline(t0.Add(n.timeout))
	if err := h.send("GET", n.path, 1); err != nil {
		return 0, err
	}
	var r h2Response
	var body []byte
	goingAway := false
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			return 0, err
		}
		ended := false
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				if err := h.write(func() error { return h.fr.WriteSettingsAck() }); err != nil {
					return 0, err
				}
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				if err := h.write(func() error { return h.fr.WritePing(true, f.Data) }); err != nil {
					return 0, err
				}
			}
		case *http2.GoAwayFrame:
			if f.LastStreamID < id {
				return 0, fmt.Errorf("server sent GOAWAY (%v, last stream %d) before stream %d", f.ErrCode, f.LastStreamID, id)
			}
			goingAway = true
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				return 0, fmt.Errorf("server reset stream %d: %v", id, f.ErrCode)
			}
		case *http2.MetaHeadersFrame:
			if f.StreamID == id {
				if r.status == 0 {
					r.status, _ = strconv.Atoi(f.PseudoValue("status"))
				}
				ended = f.StreamEnded()
			}
		case *http2.DataFrame:
			if f.StreamID == id {
				body = append(body, f.Data()...)
				ended = f.StreamEnded()
				// The answers are a few bytes; give the window back so that the server
				// never waits for it however long the client runs.
				if k := uint32(len(f.Data())); k > 0 {
					if err := h.write(func() error {
						if err := h.fr.WriteWindowUpdate(0, k); err != nil {
							return err
						}
						return nil
					}); err != nil {
						return 0, err
					}
				}
			}
		}
		if ended {
			lat := time.Since(t0)
			r.head = body
			if err := checkH2(&r, peer.Hello); err != nil {
				return 0, err
			}
			if goingAway {
				return lat, errGoingAway
			}
			return lat, nil
		}
	}
}

// errGoingAway: the answer came, and the connection is not to be used again.
var errGoingAway = errors.New("the server is going away")

// run asks every pace until ctx ends (pace 0: as soon as each answer is in). A request that
// comes due while the last one is still under way goes as soon as that one ends, and the
// schedule starts again from there: missed slots are not sent in a burst.
func (n *normalClient) run(ctx context.Context, pace time.Duration) {
	next := time.Now()
	for {
		if pace > 0 {
			if wait := time.Until(next); wait > 0 {
				select {
				case <-ctx.Done():
				case <-time.After(wait):
				}
			}
			next = next.Add(pace)
			if now := time.Now(); next.Before(now) {
				next = now
			}
		}
		if ctx.Err() != nil {
			return
		}
		n.res.Sent++
		if n.h == nil {
			if err := n.connect(); err != nil {
				n.fail(err)
				continue
			}
		}
		lat, err := n.get()
		if err == nil || errors.Is(err, errGoingAway) {
			n.lats = append(n.lats, lat)
			n.res.Answered++
		} else {
			n.fail(err)
		}
		if err != nil {
			n.h.c.Close()
			n.h = nil
			n.res.Reconnects++
		}
	}
}

func (n *normalClient) fail(err error) {
	n.res.Failed++
	if n.res.FirstFail == "" {
		n.res.FirstFail = err.Error()
	}
}

// summarize fills in the percentiles.
func (n *normalClient) summarize() {
	slices.Sort(n.lats)
	n.res.P50us, n.res.P99us, n.res.P999us = quantile(n.lats, 0.50), quantile(n.lats, 0.99), quantile(n.lats, 0.999)
	if len(n.lats) > 0 {
		n.res.MaxUs = float64(n.lats[len(n.lats)-1]) / 1e3
	}
}

// rssPeak samples the RSS of pids every step until stop is closed, and returns the peak and
// the number of samples.
func rssPeak(pids []int, step time.Duration, stop <-chan struct{}) (peak int64, samples int) {
	t := time.NewTicker(step)
	defer t.Stop()
	for {
		if rss, err := proc.RSSOf(pids); err == nil {
			peak = max(peak, rss)
			samples++
		}
		select {
		case <-stop:
			return peak, samples
		case <-t.C:
		}
	}
}

// runH2Abuse is h2-abuse: the normal client connects and warms up, the server's RSS and CPU
// are read, the attacker starts, and for -d the normal client asks while the RSS is sampled;
// then the CPU is read again, the attacker is stopped and its account read.
func runH2Abuse(ctx context.Context, args []string) (any, error) {
	var (
		cf        abuseFlags
		pid       int
		path      string
		dur       time.Duration
		pace      time.Duration
		timeout   time.Duration
		sample    time.Duration
		nice      int
		serverCPU int
	)
	fs := flag.NewFlagSet("h2-abuse", flag.ExitOnError)
	cf.register(fs)
	fs.IntVar(&pid, "pid", 0, "server process id, for its memory and CPU")
	fs.StringVar(&path, "path", "/hello", "the normal client's request path (its answer must be peer.Hello)")
	fs.DurationVar(&dur, "d", 10*time.Second, "the attack's duration")
	fs.DurationVar(&pace, "pace", 2*time.Millisecond, "the normal client's interval between requests (0: each as soon as the last is answered)")
	fs.DurationVar(&timeout, "timeout", time.Second, "the normal client's wait for an answer (or a connection) before it counts a failure")
	fs.DurationVar(&sample, "sample", 100*time.Millisecond, "interval between the server's RSS samples")
	fs.IntVar(&nice, "nice", 10, "niceness of the attacker process")
	fs.IntVar(&serverCPU, "server-cpu", 0, "the server's CPU, for the noise figure")
	fs.Parse(args)
	if !slices.Contains(attacks, cf.attack) {
		return nil, fmt.Errorf("-attack %q: one of %s", cf.attack, strings.Join(attacks, ", "))
	}
	if pid == 0 {
		return nil, fmt.Errorf("-pid is required: the figures are the server's memory and CPU")
	}
	cf.defaults()
	cfg, scheme, err := h2TLS(&cf.tls)
	if err != nil {
		return nil, err
	}
	n := &normalClient{addr: cf.addr, path: path, scheme: scheme, cfg: cfg, timeout: timeout}
	// Warm-up: a connection and a few answers, which also check that the server answers.
	if err := n.connect(); err != nil {
		return nil, fmt.Errorf("normal client: %w", err)
	}
	for range 50 {
		if _, err := n.get(); err != nil {
			return nil, fmt.Errorf("normal client, before the attack: %w", err)
		}
	}
	n.res = normalResult{PaceUs: float64(pace) / 1e3, Negotiated: n.res.Negotiated}
	pids, err := proc.Tree(pid)
	if err != nil {
		return nil, err
	}
	res := &h2AbuseResult{Mode: "h2-abuse", Attack: cf.attack}
	if res.RSSBefore, err = proc.RSSOf(pids); err != nil {
		return nil, err
	}

	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var out, errb bytes.Buffer
	cmd := exec.Command(exe, append([]string{"h2-attack", "-nice", strconv.Itoa(nice),
		"-d", (dur + 20*time.Second).String()}, cf.args()...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cpu0, err := proc.CPU(pid)
	if err != nil {
		return nil, err
	}
	busy0, _ := proc.CPUBusyTasks(serverCPU)
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	track(cmd)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	stop := make(chan struct{})
	var peak int64
	var samples int
	var wg sync.WaitGroup
	wg.Go(func() { peak, samples = rssPeak(pids, sample, stop) })
	runCtx, cancel := context.WithDeadline(ctx, t0.Add(dur))
	n.run(runCtx, pace)
	cancel()
	cpu1, err := proc.CPU(pid)
	if err != nil {
		return nil, err
	}
	busy1, _ := proc.CPUBusyTasks(serverCPU)
	elapsed := time.Since(t0)
	close(stop)
	wg.Wait()
	res.RSSEnd, _ = proc.RSSOf(pids)

	// The attacker prints its account when told to stop.
	syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
	select {
	case err = <-waited:
	case <-time.After(10 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = fmt.Errorf("the attacker did not stop within 10 s of SIGTERM: %w", <-waited)
	}
	stopChild(cmd) // anything left in its group
	if n.h != nil {
		n.h.c.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("attacker: %w: %s", err, strings.TrimSpace(errb.String()))
	}
	var atk h2AttackResult
	if err := json.Unmarshal(out.Bytes(), &atk); err != nil {
		return nil, fmt.Errorf("attacker's account: %w: %q", err, out.String())
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	n.summarize()
	res.Seconds = elapsed.Seconds()
	res.CPUns = cpu1 - cpu0
	res.CPUPct = float64(res.CPUns) / float64(elapsed) * 100
	res.OtherPct = max(float64(busy1-busy0-res.CPUns)/float64(elapsed)*100, 0)
	res.RSSPeak = max(peak, res.RSSEnd)
	res.RSSGrowth = res.RSSPeak - res.RSSBefore
	res.Samples = samples
	res.Normal = n.res
	res.Attacker = &atk
	logf("h2-abuse %s: server CPU %.0f%%, RSS +%.1f MiB (peak), normal client %d answered, %d failed, p99 %.2f ms; "+
		"attacker %d frames, %d connections, %d closed by the server, %d GOAWAYs, %d resets, %d streams held, "+
		"%d DATA frames read carrying %d bytes",
		cf.attack, res.CPUPct, float64(res.RSSGrowth)/(1<<20), n.res.Answered, n.res.Failed, n.res.P99us/1e3,
		atk.Frames, atk.Connections, atk.Closed, atk.Goaways, atk.Rsts, atk.Held, atk.DataFrames, atk.DataBytes)
	return res, nil
}
