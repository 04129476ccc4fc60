package main

import (
	"fmt"
	"slices"
	"strings"
)

// h2SummaryRows are the HTTP/2 summary's rows, one figure's metric each.
var h2SummaryRows = []struct{ fig, metric, label string }{
	{"h2-hello", "cpu_us", fmt.Sprintf("hello over h2c (h2load -c%d -m%d): server CPU µs per request", h2Conns, h2Streams)},
	{"h2-hello", "rps", "hello over h2c: requests per second"},
	{"h2-hello-tls", "cpu_us", fmt.Sprintf("hello over TLS, h2 (h2load -c%d -m%d): server CPU µs per request", h2Conns, h2Streams)},
	{"h2-hello-tls", "rps", "hello over TLS, h2: requests per second"},
	{"h2-one", "cpu_us", "hello over h2c, one connection, one stream: server CPU µs per request"},
	{"h2-one", "mean_us", "hello over h2c, one stream: mean time per request µs"},
	{"h2-idle", "kib", "idle HTTP/2 connection (h2c): KiB of server RSS"},
	{"h2-idle-tls", "kib", "idle HTTP/2 connection over TLS: KiB of server RSS"},
	{"h2-park", "kib", fmt.Sprintf("parked stream (%d per connection): KiB of server RSS", h2ParkStreams)},
	{"h2-park", "release_ms", fmt.Sprintf("release of %s parked streams: ms to the last answer", fmtNum(h2ParkConns*h2ParkStreams, 0))},
}

func init() {
	for id, text := range h2Meanings {
		meanings[id] = text
	}
}

// h2Meanings explain the HTTP/2 figures in the report.
var h2Meanings = map[string]string{
	"h2-hello": fmt.Sprintf("h2load (nghttp2) keeps %d connections open with %d streams in flight on each (-c%d -m%d), "+
		"h2c with prior knowledge, each stream a GET /hello: the HTTP/2 counterpart of the hello figure. Server CPU "+
		"per request is the server's CPU time over the run divided by the requests h2load completed: framing, "+
		"HPACK both ways, the streams' state and the handler, with the reads and writes shared by the streams a "+
		"connection has in flight. h2o answers from its file handler (it has no fixed answer like nginx's `return`).",
		h2Conns, h2Streams, h2Conns, h2Streams),
	"h2-hello-tls": "The same over TLS, h2 chosen by ALPN: each connection's handshake at h2load's start, then " +
		"records in and out, AES-128-GCM both ways. The table's notes give what h2load's connections negotiated.",
	"h2-one": "The hello figure over one h2c connection with one stream at a time (h2load -c1 -m1): every " +
		"request waits for the last answer, so the server sleeps between requests and each pays a wake-up, a read " +
		"and a write; the mean time per request is a round trip through the server.",
	"h2-idle": "The load tool opens 1,000 connections, each sending the HTTP/2 preface, a SETTINGS (ENABLE_PUSH 0) " +
		"and one GET /hello, reading the answer and the server's ACK of its SETTINGS, and acknowledging the " +
		"server's; the connection then idles. (RSS@5000 − RSS@1000) / 4000 is what an idle HTTP/2 connection costs " +
		"the server (its HPACK tables, stream bookkeeping and buffers included), as the idle figure's is for " +
		"HTTP/1.1.",
	"h2-idle-tls": "The same over TLS: a full handshake (X25519, the run's certificate, h2 by ALPN) before the " +
		"preface.",
	"h2-park": fmt.Sprintf("The load tool opens %d h2c connections, then parks GET /poll streams on all of them in "+
		"step, %d per connection (1,000 in all), reads the server's RSS, adds streams up to %d per connection "+
		"(%s), and reads it again: the growth over the 4,000 streams added, the connections open at both readings, "+
		"is what a parked stream costs (its handler's state, goroutine or continuation, and the stream's). Then "+
		"one POST /release on a connection of its own answers them all, and the time is from sending it to the "+
		"last answer. Each server announces at least %d concurrent streams (the notes give its "+
		"SETTINGS_MAX_CONCURRENT_STREAMS). nginx and h2o have no long poll of their own.",
		h2ParkConns, 1000/h2ParkConns, h2ParkStreams, fmtNum(h2ParkConns*h2ParkStreams, 0), h2ParkStreams),
}

// h2Summary writes the HTTP/2 summary: each row's medians with the ratio to dwell.
func (r *runner) h2Summary(b *strings.Builder) {
	var servers []string
	for _, f := range r.res.Figures {
		if slices.Contains(h2FigureIDs(), f.ID) {
			for _, s := range f.Servers {
				if !slices.Contains(servers, s) {
					servers = append(servers, s)
				}
			}
		}
	}
	slices.SortFunc(servers, byOrder(h2Contenders))
	var rows []string
	for _, row := range h2SummaryRows {
		f := r.res.figure(row.fig)
		if f == nil || f.metric(row.metric) == nil {
			continue
		}
		mt := f.metric(row.metric)
		cells := make([]string, len(servers))
		for i, s := range servers {
			cells[i] = cellRef(f, mt, s, h2Ref)
		}
		rows = append(rows, fmt.Sprintf("| %s | %s |\n", row.label, strings.Join(cells, " | ")))
	}
	if len(rows) == 0 || len(servers) == 0 {
		return
	}
	b.WriteString("## HTTP/2\n\n")
	b.WriteString("dwell serving HTTP/2 on its loops (h2c with prior knowledge on plaintext, h2 by ALPN over " +
		"TLS, both its defaults) beside net/http, nginx and h2o, each alone on CPU " + serverCPU + ", with h2load " +
		"or the load tool on CPU " + loadCPU + ". Each cell is the median over the rounds and, in parentheses, " +
		"the median of the per-round ratios to dwell: above 1.00× the server spends more than dwell (or, for " +
		"requests per second, serves more). See the figures' tables and what they mean below.\n\n")
	fmt.Fprintf(b, "| figure | %s |\n|---|%s\n", strings.Join(servers, " | "), strings.Repeat("---|", len(servers)))
	for _, row := range rows {
		b.WriteString(row)
	}
	b.WriteString("\n")
}

// cellRef is a summary cell: median and the ratio to ref, or why there is none.
func cellRef(f *Figure, mt *Metric, srv, ref string) string {
	if _, ok := f.Absent[srv]; ok {
		return "—"
	}
	sum, ok := mt.Summary[srv]
	if !ok {
		if len(f.Failed[srv]) > 0 {
			return "failed"
		}
		return "n/a"
	}
	s := fmtNum(sum.Median, mt.Digits)
	if q, ok := sum.ratio(ref); ok && srv != ref && !noRatio[mt.ID] {
		s += fmt.Sprintf(" (%.2f× %s)", q, ref)
	}
	return s
}

// h2Setup is the setup's HTTP/2 paragraph.
func (r *runner) h2Setup(b *strings.Builder) {
	if !hasH2(r.cfg.figures) {
		return
	}
	fmt.Fprintf(b, "- HTTP/2: dwell with its defaults (HTTP/2 on every listener: h2c with prior knowledge, h2 by "+
		"ALPN, 100 concurrent streams announced); net/http with `-h2c` on plaintext (`http.Protocols` with "+
		"UnencryptedHTTP2) and ServeTLS's defaults over TLS (h2 offered; 250 streams); nginx with one worker, "+
		"HTTP/2 on its listener (`http2 on;` from 1.25.1, `listen ... http2` before it, where a plaintext "+
		"listener speaks h2c alone), 128 streams; h2o (one thread, `bench/h2o/h2o.conf.tmpl`: max-connections "+
		"raised, http2-idle-timeout 600 s, 100 streams, TLS 1.3's "+
		"suite and X25519 set through `OPENSSL_CONF`; over TLS its private key is in a helper process, "+
		"neverbleed, that signs the handshakes, a child of h2o counted with it, as is the helper that "+
		"would annotate a crash's backtrace). Over TLS every server has the HTTPS figures' certificate "+
		"and settings. h2load runs one thread (-t1) for %d s after a 1 s warm-up with the same load; the memory "+
		"figures' client is the load tool's, a few frames written with golang.org/x/net/http2's Framer and hpack "+
		"(`cmd/load/h2.go`).\n", r.res.Meta.WrkSeconds)
}
