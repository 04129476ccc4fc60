package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/bench/internal/proc"
)

// The HTTP/2 side of the load tool: h2-idle holds connections that have each completed one
// request, h2-park holds streams the server parks, many to a connection.
//
//	load h2-idle -addr A -pid P -path /hello -n 5000 -at 1000,5000 [-tls -cert FILE]
//	load h2-park -addr A -pid P -path /poll -conns 50 -streams 100 -at 1000,5000 -release [-tls -cert FILE]
//
// The client is a few frames written with golang.org/x/net/http2's Framer and hpack: the
// preface, a SETTINGS with ENABLE_PUSH 0 (what Go's and curl's clients send; no window or
// frame size of their own, so the server keeps its defaults), the HEADERS of each request with
// END_STREAM, and the ACK of the server's SETTINGS. It answers PINGs and nothing else, and it
// keeps no state per connection between the exchanges but the socket, so that the memory on
// the load's side stays small and the server's side is what is measured. h2c is HTTP/2 with
// prior knowledge (RFC 9113, 3.3); over TLS the client offers "h2" alone by ALPN and fails
// when the server does not pick it.

// h2Conn is one HTTP/2 connection of the load tool.
type h2Conn struct {
	c  net.Conn
	fr *http2.Framer
	// wmu orders writes: a reader answers PINGs and SETTINGS while requests go out.
	wmu       sync.Mutex
	bw        *bufio.Writer
	enc       *hpack.Encoder
	hbuf      bytes.Buffer
	next      uint32
	scheme    string
	authority string
	// maxStreams is the server's SETTINGS_MAX_CONCURRENT_STREAMS once its SETTINGS arrived,
	// math.MaxUint32 when it announced none (no limit); settings says whether they did.
	maxStreams uint32
	settings   bool
}

// newH2Conn wraps c, read through r (a bufio.Reader over c, say), for requests to authority.
func newH2Conn(c net.Conn, r io.Reader, scheme, authority string) *h2Conn {
	h := &h2Conn{c: c, bw: bufio.NewWriterSize(c, 4096), next: 1, scheme: scheme, authority: authority,
		maxStreams: math.MaxUint32}
	h.fr = http2.NewFramer(h.bw, r)
	h.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	h.fr.MaxHeaderListSize = 64 << 10
	h.enc = hpack.NewEncoder(&h.hbuf)
	return h
}

// start sends the client's connection preface and SETTINGS.
func (h *h2Conn) start() error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	h.bw.WriteString(http2.ClientPreface)
	if err := h.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0}); err != nil {
		return err
	}
	return h.bw.Flush()
}

// send writes n requests without a body, each on a new stream, in one write.
func (h *h2Conn) send(method, path string, n int) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	for range n {
		h.hbuf.Reset()
		h.enc.WriteField(hpack.HeaderField{Name: ":method", Value: method})
		h.enc.WriteField(hpack.HeaderField{Name: ":scheme", Value: h.scheme})
		h.enc.WriteField(hpack.HeaderField{Name: ":authority", Value: h.authority})
		h.enc.WriteField(hpack.HeaderField{Name: ":path", Value: path})
		if method == "POST" {
			h.enc.WriteField(hpack.HeaderField{Name: "content-length", Value: "0"})
		}
		err := h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: h.next, BlockFragment: h.hbuf.Bytes(),
			EndStream: true, EndHeaders: true})
		if err != nil {
			return err
		}
		h.next += 2
	}
	return h.bw.Flush()
}

// h2Response is what the load tool keeps of a response: its status and the start of its body.
type h2Response struct {
	status int
	head   []byte
}

// read reads frames until one ends a stream (returned with its response) or the server's
// SETTINGS have been acknowledged by it (acked). Connection frames are handled here: the
// server's SETTINGS acknowledged, a PING answered, a GOAWAY or a stream reset is an error,
// since no figure expects one. resps holds the responses under way, by stream.
func (h *h2Conn) read(resps map[uint32]*h2Response) (id uint32, r *h2Response, acked bool, err error) {
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			return 0, nil, false, err
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				return 0, nil, true, nil
			}
			if v, ok := f.Value(http2.SettingMaxConcurrentStreams); ok {
				h.maxStreams = v
			}
			h.settings = true
			if err := h.write(func() error { return h.fr.WriteSettingsAck() }); err != nil {
				return 0, nil, false, err
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				if err := h.write(func() error { return h.fr.WritePing(true, f.Data) }); err != nil {
					return 0, nil, false, err
				}
			}
		case *http2.GoAwayFrame:
			return 0, nil, false, fmt.Errorf("server sent GOAWAY (%v, last stream %d) %q", f.ErrCode, f.LastStreamID, f.DebugData())
		case *http2.RSTStreamFrame:
			return 0, nil, false, fmt.Errorf("server reset stream %d: %v", f.StreamID, f.ErrCode)
		case *http2.MetaHeadersFrame:
			id := f.StreamID
			r := resps[id]
			if r == nil {
				r = &h2Response{}
				resps[id] = r
			}
			if r.status == 0 {
				r.status, _ = strconv.Atoi(f.PseudoValue("status"))
			}
			if f.StreamEnded() {
				delete(resps, id)
				return id, r, false, nil
			}
		case *http2.DataFrame:
			id := f.StreamID
			r := resps[id]
			if r == nil {
				return 0, nil, false, fmt.Errorf("DATA before HEADERS on stream %d", id)
			}
			if len(r.head) < 64 {
				r.head = append(r.head, f.Data()[:min(len(f.Data()), 64-len(r.head))]...)
			}
			if f.StreamEnded() {
				delete(resps, id)
				return id, r, false, nil
			}
		}
		// WINDOW_UPDATE, PRIORITY and the like: nothing to do. The bodies are a few bytes, far
		// from the 64 KiB windows, so the client never needs to open them.
	}
}

func (h *h2Conn) write(w func() error) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	if err := w(); err != nil {
		return err
	}
	return h.bw.Flush()
}

// checkH2 checks a response as check does an HTTP/1.1 one.
func checkH2(r *h2Response, want string) error {
	if r.status != 200 {
		return fmt.Errorf("load: status %d, body %q", r.status, r.head)
	}
	if want != "" && !bytes.HasPrefix(r.head, []byte(want)) {
		return fmt.Errorf("load: body %q, want %q", r.head, want)
	}
	return nil
}

// h2Exchange sends the preface and one request on a new connection, and reads until the
// answer is complete and the server has acknowledged the client's SETTINGS: the connection is
// then idle on both sides. The caller's deadline bounds it.
func h2Exchange(c net.Conn, br *bufio.Reader, scheme, authority, method, path, want string) error {
	h := newH2Conn(c, br, scheme, authority)
	if err := h.start(); err != nil {
		return err
	}
	if err := h.send(method, path, 1); err != nil {
		return err
	}
	resps := map[uint32]*h2Response{}
	var resp *h2Response
	acked := false
	for resp == nil || !acked {
		_, r, ack, err := h.read(resps)
		if err != nil {
			return err
		}
		acked = acked || ack
		if r != nil {
			resp = r
		}
	}
	return checkH2(resp, want)
}

// h2TLS is the client's TLS configuration for HTTP/2: the idle and park modes' own, offering
// "h2" alone.
func h2TLS(t *tlsFlags) (*tls.Config, string, error) {
	cfg, err := t.config()
	if cfg == nil || err != nil {
		return nil, "http", err
	}
	cfg.NextProtos = []string{"h2"}
	return cfg, "https", nil
}

// secureH2 runs the TLS handshake of a held connection and checks that it chose h2.
func secureH2(c *held, cfg *tls.Config) (string, error) {
	neg, err := secure(c, cfg)
	if err != nil {
		return "", err
	}
	if p := c.c.(*tls.Conn).ConnectionState().NegotiatedProtocol; p != "h2" {
		return "", fmt.Errorf("ALPN chose %q, not h2", p)
	}
	return neg + ", h2", nil
}

// runH2Idle is idle over HTTP/2: each connection sends the preface and one GET, reads the
// answer and idles.
func runH2Idle(ctx context.Context, args []string) (any, error) {
	var h holdFlags
	fs := flag.NewFlagSet("h2-idle", flag.ExitOnError)
	h.register(fs, "/hello")
	fs.Parse(args)
	res := &holdResult{Mode: "h2-idle", Path: h.path}
	cfg, scheme, err := h2TLS(&h.tls)
	if err != nil {
		return nil, err
	}
	var once sync.Once
	conns, err := hold(ctx, &h, res, func(c *held) error {
		c.c.SetDeadline(time.Now().Add(10 * time.Second))
		defer c.c.SetDeadline(time.Time{})
		if cfg != nil {
			neg, err := secureH2(c, cfg)
			if err != nil {
				return err
			}
			once.Do(func() { res.Negotiated = neg })
		}
		return h2Exchange(c.c, c.br, scheme, h.addr, "GET", h.path, peer.Hello)
	})
	closeAll(conns)
	return res, err
}

// h2ParkResult is what h2-park prints.
type h2ParkResult struct {
	Mode           string `json:"mode"`
	Path           string `json:"path"`
	Conns          int    `json:"conns"`
	StreamsPerConn int    `json:"streams_per_conn"`
	// Checkpoints are the server's RSS with so many streams parked on all the connections.
	Checkpoints []struct {
		Streams int   `json:"streams"`
		RSS     int64 `json:"rss_bytes"`
	} `json:"checkpoints"`
	// BytesPerStream is the RSS growth between the first and the last checkpoint over the
	// streams added: the connections were all open at both, so it is the streams' alone.
	BytesPerStream float64 `json:"bytes_per_stream"`
	Released       int     `json:"released"`
	ReleaseMS      float64 `json:"release_ms"`
	// MaxStreams is the server's SETTINGS_MAX_CONCURRENT_STREAMS (0: none announced).
	MaxStreams uint32 `json:"max_streams"`
	Negotiated string `json:"negotiated,omitempty"`
}

// parked is one connection of h2-park and what its reader saw: ok and last are the reader's
// until it returns; err is read meanwhile, under mu.
type parked struct {
	*h2Conn
	ok   int
	last time.Time
	mu   sync.Mutex
	err  error
}

func (p *parked) fail(err error) {
	p.mu.Lock()
	p.err = err
	p.mu.Unlock()
}

func (p *parked) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// runH2Park opens -conns connections, then parks streams on all of them in step up to each
// checkpoint (a total of streams), reading the server's RSS at each; with -release it sends
// one POST -release-path on a connection of its own and times the last of the answers.
func runH2Park(ctx context.Context, args []string) (any, error) {
	var (
		cf          common
		tf          tlsFlags
		conns, per  int
		at, relPath string
		release     bool
		// released is set once the release is on its way: an answer before it is an error.
		released atomic.Bool
	)
	fs := flag.NewFlagSet("h2-park", flag.ExitOnError)
	cf.register(fs, "/poll")
	tf.register(fs, true)
	fs.IntVar(&conns, "conns", 50, "connections")
	fs.IntVar(&per, "streams", 100, "streams parked on each connection")
	fs.StringVar(&at, "at", "1000,5000", "stream totals at which to read the server's RSS (multiples of -conns)")
	fs.BoolVar(&release, "release", false, "release the parked streams at the end and check every answer")
	fs.StringVar(&relPath, "release-path", "/release", "path that releases the parked requests (POST)")
	fs.Parse(args)
	total := conns * per
	points, err := checkpoints(at, total)
	if err != nil {
		return nil, err
	}
	for _, p := range points {
		if p%conns != 0 {
			return nil, fmt.Errorf("checkpoint %d is not a multiple of %d connections", p, conns)
		}
	}
	if cf.pid == 0 {
		return nil, fmt.Errorf("-pid is required: the figure is the server's memory")
	}
	cfg, scheme, err := h2TLS(&tf)
	if err != nil {
		return nil, err
	}
	res := &h2ParkResult{Mode: "h2-park", Path: cf.path, Conns: conns, StreamsPerConn: per}
	d, err := newDialer(cf.addr, conns+1)
	if err != nil {
		return nil, err
	}
	// open dials a connection, runs its handshakes and waits for the server's SETTINGS, which
	// say how many streams it may hold.
	open := func() (*h2Conn, error) {
		c, err := d.dial()
		if err != nil {
			return nil, err
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		hc := &held{c: c, br: bufio.NewReaderSize(c, 4096)}
		if cfg != nil {
			neg, err := secureH2(hc, cfg)
			if err != nil {
				c.Close()
				return nil, err
			}
			res.Negotiated = neg
		}
		h := newH2Conn(hc.c, hc.br, scheme, cf.addr)
		err = h.start()
		for err == nil && !h.settings {
			_, _, _, err = h.read(map[uint32]*h2Response{})
		}
		if err != nil {
			hc.c.Close()
			return nil, err
		}
		hc.c.SetDeadline(time.Time{})
		return h, nil
	}
	var all []*parked
	defer func() {
		for _, p := range all {
			p.c.Close()
		}
	}()
	for range conns {
		h, err := open()
		if err != nil {
			return nil, err
		}
		if h.maxStreams < uint32(per) {
			h.c.Close()
			return nil, fmt.Errorf("the server allows %d concurrent streams per connection (SETTINGS_MAX_CONCURRENT_STREAMS); the figure parks %d", h.maxStreams, per)
		}
		if h.maxStreams != math.MaxUint32 {
			res.MaxStreams = h.maxStreams
		}
		all = append(all, &parked{h2Conn: h})
	}
	// One reader per connection from now on: it answers what the server sends while the
	// streams wait (a PING, the ACK of the client's SETTINGS) and counts the answers after
	// the release. An answer or a reset before the release fails the run.
	var wg sync.WaitGroup
	for _, p := range all {
		wg.Go(func() {
			resps := map[uint32]*h2Response{}
			for p.ok < per {
				_, r, _, err := p.read(resps)
				if err == nil && r != nil {
					if !released.Load() {
						err = fmt.Errorf("a parked stream was answered before the release: status %d, %q", r.status, r.head)
					} else {
						err = checkH2(r, peer.Released)
					}
				}
				if err != nil {
					p.fail(err)
					return
				}
				if r != nil {
					p.ok++
					p.last = time.Now()
				}
			}
		})
	}
	failed := func() error {
		for _, p := range all {
			if err := p.failed(); err != nil {
				return err
			}
		}
		return nil
	}
	sent := 0
	for _, point := range points {
		want := point / conns
		for _, p := range all {
			if err := p.send("GET", cf.path, want-sent); err != nil {
				return nil, err
			}
		}
		sent = want
		settle(ctx, cf.pid)
		if err := errors.Join(ctx.Err(), failed()); err != nil {
			return nil, err
		}
		rss, err := proc.RSS(cf.pid)
		if err != nil {
			return nil, err
		}
		res.Checkpoints = append(res.Checkpoints, struct {
			Streams int   `json:"streams"`
			RSS     int64 `json:"rss_bytes"`
		}{point, rss})
		logf("h2-park: %d streams on %d connections, server RSS %.1f MiB", point, conns, float64(rss)/(1<<20))
	}
	if n := len(res.Checkpoints); n > 1 {
		first, last := res.Checkpoints[0], res.Checkpoints[n-1]
		res.BytesPerStream = float64(last.RSS-first.RSS) / float64(last.Streams-first.Streams)
	}
	if !release {
		return res, nil
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range all {
		p.c.SetReadDeadline(deadline)
	}
	rel, err := open()
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	defer rel.c.Close()
	rel.c.SetDeadline(deadline)
	released.Store(true)
	t0 := time.Now()
	if err := rel.send("POST", relPath, 1); err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	for {
		_, r, _, err := rel.read(map[uint32]*h2Response{})
		if err != nil {
			return nil, fmt.Errorf("release: %w", err)
		}
		if r != nil {
			if r.status != 200 {
				return nil, fmt.Errorf("release: status %d", r.status)
			}
			break
		}
	}
	wg.Wait()
	var last time.Time
	var first error
	for _, p := range all {
		res.Released += p.ok
		if p.last.After(last) {
			last = p.last
		}
		if err := p.failed(); err != nil && first == nil {
			first = err
		}
	}
	if !last.IsZero() {
		res.ReleaseMS = float64(last.Sub(t0)) / float64(time.Millisecond)
	}
	logf("h2-park: %d of %d answered %.1f ms after the release", res.Released, total, res.ReleaseMS)
	if res.Released != total && first == nil {
		first = fmt.Errorf("%d of %d parked streams answered", res.Released, total)
	}
	return res, first
}
