package xnettest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// FuzzConn drives one of dwell's HTTP/2 connections with a client's frame sequences, read from
// the input as a little program: requests whose field blocks x/net's HPACK encoder writes (so
// that its dynamic table is the oracle for the server's: every request carries a value of its
// own in X-V, which the handler echoes), split into CONTINUATIONs, depending on themselves or
// not; bodies, trailers, PRIORITY frames of any length, window updates, PINGs, resets,
// SETTINGS, frames of unknown or illegal kinds. Then every stream still open is ended and a
// last request is sent. Whatever came before:
//
//   - nothing panics on the server, and what it sends is valid HTTP/2 (x/net's Framer reads it);
//   - every stream the client opened is answered, reset, or covered by a GOAWAY (an error ends
//     the connection with one; a close without one fails);
//   - an answer echoes exactly the X-V its request carried, so the HPACK table never drifts
//     from the encoder's, refusals and stream errors included: no COMPRESSION_ERROR, ever, as
//     every field block comes from the encoder;
//   - once the connection is over, the server holds none of its streams.
//
// The corpus is testdata/fuzz/FuzzConn; cases that once failed are kept there.
func FuzzConn(f *testing.F) {
	for _, seed := range [][]byte{
		{opGet, 0, opGet, 1, opGet, 2},
		{opPriority, 0, 0, opGet, 0},                 // PRIORITY of 4 bytes, a GET in the same write
		{opGet, 0x80 | 1, opGet, 2},                  // a HEADERS that depends on itself, then a GET
		{opGet, 0x40 | 0x80 | 3, opGet, 3},           // the same with a CONTINUATION
		{opPost, 5, opTrailers, 0, opGet, 1},         // trailers without END_STREAM
		{opPost, 5, opData, 3, 1, opTrailers, 1},     // a body, then trailers
		{opPing, opWindow, 0, 9, opSettings, 4, 1},   // control frames
		{opPost, 1, opReset, 0, opGet, 4},            // a reset stream
		{opTableSize, 0, opGet, 1, opTableSize, 200}, // table size updates
		{opRaw, 0x20, 0, 1, 5, opGet, 2},             // an unknown frame type
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, prog []byte) {
		s := fuzzServer(t)
		run := newConnRun(t, s.addr)
		run.program(prog)
		run.finish()
		run.check()
		run.nc.Close()
		s.waitNoStreams(t)
		if p := s.panicked(); p != "" {
			t.Fatalf("the server panicked: %s", p)
		}
	})
}

// The program's operations: each is one byte (its value modulo opCount), followed by the bytes
// it reads as arguments (zero where the input has run out).
const (
	opGet       = iota // flags byte: 0x80 depends on itself, 0x40 split into CONTINUATIONs, 0x3f: which values
	opPost             // length of the body it declares (0: none declared)
	opData             // stream (index of those opened), length, end
	opTrailers         // stream, end
	opPriority         // length (4, 5 or 6 by value), dependency (0: itself)
	opWindow           // stream (0: the connection), increment
	opPing             //
	opReset            // stream
	opSettings         // setting id, value
	opTableSize        // the encoder's table size, in units of 32 bytes
	opRaw              // type, flags, stream, length
	opCount
)

// fuzzSrv is the server FuzzConn's inputs share, started once.
type fuzzSrv struct {
	srv  *core.Server
	addr string
	mu   sync.Mutex
	log  bytes.Buffer
}

var (
	fuzzOnce sync.Once
	fuzzS    *fuzzSrv
	fuzzErr  error
)

func fuzzServer(t *testing.T) *fuzzSrv {
	fuzzOnce.Do(func() {
		s := &fuzzSrv{}
		h := slog.New(slog.NewTextHandler(lockedWriter{s}, &slog.HandlerOptions{Level: slog.LevelError}))
		srv := core.NewServer(echoHandler, core.Options{Addr: "127.0.0.1:0", Loops: 1, Logger: h})
		if fuzzErr = srv.Listen(); fuzzErr != nil {
			return
		}
		go srv.ListenAndServe()
		s.srv, s.addr = srv, srv.Addr().String()
		fuzzS = s
	})
	if fuzzErr != nil {
		t.Fatal(fuzzErr)
	}
	return fuzzS
}

type lockedWriter struct{ s *fuzzSrv }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.log.Write(p)
}

// panicked returns what the server logged of a panic, if anything.
func (s *fuzzSrv) panicked() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.log.String(); strings.Contains(l, "panic") {
		return l
	}
	return ""
}

// waitNoStreams waits until the server holds no stream: those of a connection that is over
// are released with it.
func (s *fuzzSrv) waitNoStreams(t *testing.T) {
	coretest.WaitFor(t, "the server to release every stream", func() bool { return s.srv.Stats().Total.Conns.Streams == 0 })
}

// echoHandler answers 200 with "v=" and the request's X-V, after reading its body whole.
func echoHandler(c *core.Ctx) {
	if _, err := io.Copy(io.Discard, bodyOf{c}); err != nil {
		return
	}
	c.WriteString("v=" + c.Header("X-V"))
}

type bodyOf struct{ c *core.Ctx }

func (b bodyOf) Read(p []byte) (int, error) { return b.c.ReadBody(p) }

// connSafetyNet bounds how long FuzzConn waits for the server, only so that a lost stream fails
// the input rather than hanging the fuzzer: no input asserts how long anything takes.
const connSafetyNet = time.Minute

// A connRun is one input's connection: what the client sent and what came back.
type connRun struct {
	t    *testing.T
	nc   net.Conn
	fr   *http2.Framer
	out  bytes.Buffer // frames written, not yet sent
	enc  *hpack.Encoder
	hbuf bytes.Buffer

	next    uint32              // the next stream id to open
	opened  []uint32            // the streams opened, in order
	want    map[uint32]string   // the body each stream's answer must have, when answered 200
	ended   map[uint32]bool     // the client ended its side
	reset   map[uint32]bool     // the client reset it
	got     map[uint32]*streamR // what came back
	goAway  *http2.GoAwayFrame
	closed  bool
	readErr error
}

type streamR struct {
	status string
	body   []byte
	end    bool
	rst    http2.ErrCode
	reset  bool
}

func newConnRun(t *testing.T, addr string) *connRun {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(connSafetyNet))
	r := &connRun{t: t, nc: nc, next: 1, want: map[uint32]string{}, ended: map[uint32]bool{},
		reset: map[uint32]bool{}, got: map[uint32]*streamR{}}
	r.fr = http2.NewFramer(&r.out, nil)
	r.fr.AllowIllegalWrites = true
	r.enc = hpack.NewEncoder(&r.hbuf)
	r.out.WriteString(http2.ClientPreface)
	r.fr.WriteSettings()
	return r
}

// program writes the input's operations, all of them in one write.
func (r *connRun) program(prog []byte) {
	arg := func() byte {
		if len(prog) == 0 {
			return 0
		}
		b := prog[0]
		prog = prog[1:]
		return b
	}
	for n := 0; len(prog) > 0 && n < 64; n++ {
		switch arg() % opCount {
		case opGet:
			r.request("GET", arg(), -1)
		case opPost:
			n := int(arg())
			if n == 0 {
				n = -1
			}
			r.request("POST", 0, n)
		case opData:
			id := r.stream(arg())
			n, end := int(arg()), arg()&1 == 1
			r.fr.WriteData(id, end, bytes.Repeat([]byte{'d'}, n))
			if end {
				r.ended[id] = true
			}
		case opTrailers:
			id := r.stream(arg())
			end := arg()&1 == 1
			r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: r.block([]hpack.HeaderField{{Name: "x-t", Value: "t" + strconv.Itoa(int(id))}}),
				EndStream: end, EndHeaders: true})
			if end {
				r.ended[id] = true
			}
		case opPriority:
			n := 4 + int(arg()%3)
			dep := uint32(arg())
			p := make([]byte, 5)
			binary.BigEndian.PutUint32(p, dep)
			p = append(p, 0)[:n]
			id := r.next
			if dep == 0 {
				binary.BigEndian.PutUint32(p, id) // itself
			}
			r.fr.WriteRawFrame(http2.FramePriority, 0, id, p)
		case opWindow:
			var id uint32
			if b := arg(); b != 0 {
				id = r.stream(b)
			}
			r.fr.WriteWindowUpdate(id, uint32(arg()))
		case opPing:
			r.fr.WritePing(false, [8]byte{1})
		case opReset:
			id := r.stream(arg())
			r.fr.WriteRSTStream(id, http2.ErrCodeCancel)
			r.reset[id] = true
		case opSettings:
			id, v := http2.SettingID(arg()%8), uint32(arg())
			switch id {
			case http2.SettingMaxFrameSize, http2.SettingHeaderTableSize:
				v += 1 << 14 // a valid one: their errors are not what this explores
			case http2.SettingInitialWindowSize:
				v += 8 // room for an answer: a stream at a zero window waits for WriteTimeout
			}
			r.fr.WriteSettings(http2.Setting{ID: id, Val: v})
		case opTableSize:
			r.enc.SetMaxDynamicTableSize(uint32(arg()) * 32)
		case opRaw:
			typ, fl, id, n := http2.FrameType(arg()), http2.Flags(arg()), uint32(arg()), int(arg()%32)
			if typ == http2.FrameHeaders || typ == http2.FrameContinuation {
				typ = 0x20 // field blocks come from the encoder alone
			}
			r.fr.WriteRawFrame(typ, fl, id, make([]byte, n))
		}
	}
}

// stream returns one of the streams opened, by index (the next one to open when none is).
func (r *connRun) stream(i byte) uint32 {
	if len(r.opened) == 0 {
		return r.next
	}
	return r.opened[int(i)%len(r.opened)]
}

// block encodes fields with the encoder, which keeps its table as the server's must.
func (r *connRun) block(fields []hpack.HeaderField) []byte {
	r.hbuf.Reset()
	for _, f := range fields {
		r.enc.WriteField(f)
	}
	return bytes.Clone(r.hbuf.Bytes())
}

// request opens the next stream with method; flags as opGet reads them; length, for a POST, the
// Content-Length it declares (-1: none), the body to come in opData frames.
func (r *connRun) request(method string, flags byte, length int) {
	id := r.next
	r.next += 2
	v := "v" + strconv.Itoa(int(flags&0x3f)) // values repeat, so that the encoder indexes them
	fields := []hpack.HeaderField{{Name: ":method", Value: method}, {Name: ":scheme", Value: "http"},
		{Name: ":authority", Value: "h"}, {Name: ":path", Value: "/" + v}, {Name: "x-v", Value: v}}
	if length >= 0 {
		fields = append(fields, hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(length)})
	}
	block := r.block(fields)
	end := method == "GET"
	first := block
	if flags&0x40 != 0 && len(block) > 1 {
		first = block[:len(block)/2]
	}
	p := http2.HeadersFrameParam{StreamID: id, BlockFragment: first, EndStream: end, EndHeaders: len(first) == len(block)}
	if flags&0x80 != 0 {
		p.Priority = http2.PriorityParam{StreamDep: id, Weight: 15}
	}
	r.fr.WriteHeaders(p)
	if len(first) < len(block) {
		r.fr.WriteContinuation(id, true, block[len(first):])
	}
	r.opened = append(r.opened, id)
	r.want[id] = "v=" + v
	r.ended[id] = end
}

// finish ends every stream the client left open, sends a last GET, writes it all, and reads
// until every stream is resolved or the connection is over.
func (r *connRun) finish() {
	for _, id := range r.opened {
		if !r.ended[id] && !r.reset[id] {
			r.fr.WriteData(id, true, nil)
			r.ended[id] = true
		}
	}
	r.request("GET", 0, -1)
	if _, err := r.nc.Write(r.out.Bytes()); err != nil {
		r.t.Logf("writing the frames: %v", err) // the server may have ended the connection already
	}
	rd := http2.NewFramer(io.Discard, r.nc)
	rd.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	rd.SetMaxReadFrameSize(1 << 24)
	for !r.resolved() {
		f, err := rd.ReadFrame()
		if err != nil {
			r.closed, r.readErr = true, err
			return
		}
		r.note(f)
	}
}

// resolved reports whether every stream opened is answered or reset, or the server said
// GOAWAY.
func (r *connRun) resolved() bool {
	if r.goAway != nil {
		return false // read on until the close, which must follow
	}
	for _, id := range r.opened {
		if g := r.got[id]; !r.reset[id] && (g == nil || !g.end && !g.reset) {
			return false
		}
	}
	return true
}

// covered reports whether the server's GOAWAY covers stream id: an error's covers every stream,
// a graceful one (NO_ERROR) those past its last stream.
func (r *connRun) covered(id uint32) bool {
	return r.goAway != nil && (r.goAway.ErrCode != http2.ErrCodeNo || id > r.goAway.LastStreamID)
}

func (r *connRun) note(f http2.Frame) {
	id := f.Header().StreamID
	g := r.got[id]
	if g == nil && id != 0 {
		g = &streamR{}
		r.got[id] = g
	}
	switch f := f.(type) {
	case *http2.MetaHeadersFrame:
		if st := f.PseudoValue("status"); st != "" && st[0] != '1' {
			g.status = st
		}
		g.end = g.end || f.StreamEnded()
	case *http2.DataFrame:
		g.body = append(g.body, f.Data()...)
		g.end = g.end || f.StreamEnded()
	case *http2.RSTStreamFrame:
		g.reset, g.rst = true, f.ErrCode
	case *http2.GoAwayFrame:
		r.goAway = f
	case *http2.PingFrame:
	}
}

// check applies the invariants to what came back.
func (r *connRun) check() {
	t := r.t
	if r.closed && r.goAway == nil {
		t.Fatalf("the connection ended without GOAWAY (%v) with streams unanswered", r.readErr)
	}
	if r.closed && r.readErr != nil && !errors.Is(r.readErr, io.EOF) && !isReset(r.readErr) {
		t.Fatalf("reading the server's frames: %v", r.readErr)
	}
	if r.goAway != nil && r.goAway.ErrCode == http2.ErrCodeCompression {
		t.Fatalf("GOAWAY COMPRESSION_ERROR %q: the server's HPACK table drifted from the encoder's", r.goAway.DebugData())
	}
	for _, id := range r.opened {
		g := r.got[id]
		switch {
		case g != nil && g.status == "200" && g.end:
			if string(g.body) != r.want[id] {
				t.Fatalf("stream %d answered %q, want %q: the table drifted", id, g.body, r.want[id])
			}
		case g != nil && (g.end || g.reset), r.reset[id], r.covered(id):
		default:
			t.Fatalf("stream %d neither answered, reset nor covered by a GOAWAY", id)
		}
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && strings.Contains(op.Err.Error(), "connection reset")
}
