package main

import (
	"fmt"
	"strings"
)

// tlsSummaryRows are the HTTPS summary's rows, one figure's metric each; plain names the
// plaintext figure whose median the row's is compared with, if any.
var tlsSummaryRows = []struct{ fig, metric, label, plain string }{
	{fig: "tls-hello", metric: "cpu_us", label: "hello over TLS keep-alive: server CPU µs per request", plain: "hello"},
	{fig: "tls-hello", metric: "rps", label: "hello over TLS keep-alive: requests per second (wrk -c50)"},
	{fig: "tls-full", metric: "cpu_us", label: "full handshake, one request, close: server CPU µs", plain: "close"},
	{fig: "tls-full", metric: "hps", label: "full handshakes: connections per second (8 in flight)"},
	{fig: "tls-resume", metric: "cpu_us", label: "resumed handshake, one request, close: server CPU µs", plain: "close"},
	{fig: "tls-resume", metric: "resumed_pct", label: "resumed handshakes: % that resumed"},
	{fig: "tls-full-mlkem", metric: "cpu_us", label: "full handshake, X25519MLKEM768: server CPU µs"},
	{fig: "tls-resume-mlkem", metric: "cpu_us", label: "resumed handshake, X25519MLKEM768: server CPU µs"},
	{fig: "tls-idle", metric: "kib", label: "idle TLS keep-alive connection: KiB of server RSS", plain: "idle"},
	{fig: "tls-park", metric: "kib", label: "parked long poll over TLS: KiB of server RSS", plain: "park"},
}

func init() {
	for id, text := range tlsMeanings {
		meanings[id] = text
	}
}

// tlsMeanings explain the HTTPS figures in the report.
var tlsMeanings = map[string]string{
	"tls-hello": "The hello figure over HTTPS: wrk -t1 -c50 to https://…/hello, each connection's " +
		"handshake at wrk's start (50 of them, a fraction of a percent of the run's CPU), then " +
		"keep-alive requests, each a record in and a record out: server CPU per request is the HTTP " +
		"work plus AES-128-GCM both ways and the record layer.",
	"tls-full": "The load tool keeps 8 connections in flight, each a new TCP connection, a full TLS 1.3 " +
		"handshake (crypto/tls's client, X25519 key share, the server's ECDSA P-256 signature checked, " +
		"its certificate pinned), one GET /hello, its answer, and a close (close_notify, then FIN), then " +
		"the next, for the run's duration after a warm-up. Server CPU per connection is the server's CPU " +
		"time over the connections completed: accept, key exchange, signature, session ticket(s), the " +
		"request and the close. The client has no session cache, so no handshake resumes. Connections per " +
		"second are bounded by the client's core as much as the server's (see the load tool's CPU row).",
	"tls-resume": "The same with a tls.ClientSessionCache shared by the 8 workers: every handshake after the " +
		"first offers the last ticket the server sent, and resumes (the row of resumed handshakes says how " +
		"many did; TLS 1.3 resumption with psk_dhe_ke, so an X25519 exchange but no certificate or " +
		"signature). Each server issues tickets as it does by default: crypto/tls one per handshake, " +
		"OpenSSL (nginx) two after a full handshake and one after a resumed one.",
	"tls-full-mlkem": "The full-handshake figure with the Go servers and the client on crypto/tls's default " +
		"key exchange, X25519MLKEM768 (the hybrid post-quantum one, the client's key share 1,216 bytes): " +
		"what a Go client or a current browser gets from a Go server that keeps Go's defaults. nginx's " +
		"OpenSSL 3.0 has no ML-KEM.",
	"tls-resume-mlkem": "The resumed-handshake figure with X25519MLKEM768, as above.",
	"tls-burst": "A crowd connecting at once, as long-poll clients do when a service comes back: the load " +
		"tool first opens 4 keep-alive connections that ask for /hello every 2 ms, then releases 1,000 " +
		"goroutines together, each a new TCP connection, a full handshake (X25519) and one GET /hello, its " +
		"connection kept open until all are done. The figures: the time from the release until the last " +
		"client has its answer, and the median client's; the open connections' latency meanwhile (p99: " +
		"whether they are still served); the server's CPU over the burst. The client's core does its half " +
		"of every handshake too, the same for every server.",
	"tls-idle": "The idle figure over HTTPS: each of the 1,000, then 5,000 connections completes a full " +
		"handshake (X25519) and one GET /hello, reads its answer (and the session ticket before it) and " +
		"idles; (RSS@5000 − RSS@1000) / 4000 is what an idle TLS keep-alive connection costs the server, " +
		"its TLS state (keys, buffers) included.",
	"tls-park": "The parked-poll figure over HTTPS: each connection completes a full handshake and sends " +
		"GET /poll, which parks; the release comes over a TLS connection of its own. nginx has no long " +
		"poll of its own.",
}

// tlsSummary writes the HTTPS summary: each row's medians with the ratio to nginx (to net/http
// where nginx is absent), and what TLS adds over the plaintext figure when the run measured it.
func (r *runner) tlsSummary(b *strings.Builder) {
	var servers []string
	for _, s := range r.res.Servers {
		if isTLSContender(s) {
			servers = append(servers, s)
		}
	}
	var rows []string
	for _, row := range tlsSummaryRows {
		f := r.res.figure(row.fig)
		if f == nil {
			continue
		}
		mt := f.metric(row.metric)
		cells := make([]string, len(servers))
		for i, s := range servers {
			cells[i] = cellTLS(f, mt, s)
		}
		rows = append(rows, fmt.Sprintf("| %s | %s |\n", row.label, strings.Join(cells, " | ")))
		if plain := r.res.figure(row.plain); plain != nil {
			if pm := plain.metric(row.metric); pm != nil {
				for i, s := range servers {
					cells[i] = overPlain(f, mt, plain, pm, s)
				}
				rows = append(rows, fmt.Sprintf("| … over plaintext %s (difference of the medians) | %s |\n",
					plain.ID, strings.Join(cells, " | ")))
			}
		}
	}
	if len(rows) == 0 || len(servers) == 0 {
		return
	}
	b.WriteString("## HTTPS\n\n")
	b.WriteString("dwell serving TLS on its loops (crypto/tls) beside nginx and net/http's ServeTLS, each alone " +
		"on CPU " + serverCPU + " with the same certificate, TLS 1.3, TLS_AES_128_GCM_SHA256 and X25519 for all " +
		"(the X25519MLKEM768 rows excepted: Go's default key exchange, Go servers only). Each cell is the " +
		"median over the rounds and, in parentheses, the median of the per-round ratios to nginx (to net/http " +
		"where nginx is absent); below 1.00× is better. A row compared with its plaintext figure gives, " +
		"below it, the TLS figure's median minus the plaintext one's (the close figure for the handshakes: " +
		"a connection per request without TLS). See the figures' tables and what they mean below.\n\n")
	fmt.Fprintf(b, "| figure | %s |\n|---|%s\n", strings.Join(servers, " | "), strings.Repeat("---|", len(servers)))
	for _, row := range rows {
		b.WriteString(row)
	}
	b.WriteString("\n")
}

// cellTLS is an HTTPS summary cell: median and the ratio to nginx, or to net/http where nginx
// is absent.
func cellTLS(f *Figure, mt *Metric, srv string) string {
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
	if noRatio[mt.ID] {
		return s
	}
	for _, ref := range []string{"nginx", baseline} {
		if srv == ref {
			break
		}
		if _, absent := f.Absent[ref]; absent {
			continue
		}
		if q, ok := sum.ratio(ref); ok {
			return s + fmt.Sprintf(" (%.2f× %s)", q, refName(ref))
		}
		break
	}
	return s
}

// overPlain is the difference between a server's TLS median and its plaintext one.
func overPlain(f *Figure, mt *Metric, plain *Figure, pm *Metric, srv string) string {
	t, ok1 := mt.Summary[srv]
	p, ok2 := pm.Summary[srv]
	if _, absent := f.Absent[srv]; absent || !ok1 || !ok2 {
		return "—"
	}
	return strings.TrimSpace(fmt.Sprintf("%+.*f %s", mt.Digits, t.Median-p.Median, mt.Unit))
}

// tlsSetup is the setup's HTTPS paragraph.
func (r *runner) tlsSetup(b *strings.Builder) {
	if !hasTLS(r.cfg.figures) {
		return
	}
	fmt.Fprintf(b, "- HTTPS: one ECDSA P-256 certificate, self-signed for 127.0.0.1 and generated for the run "+
		"(`$WORK/tls/cert.pem`, `key.pem`), for every server. TLS 1.3 with TLS_AES_128_GCM_SHA256 and X25519 "+
		"throughout: dwell (Options.TLSConfig, Server.ListenAndServeTLS) and net/http (Server.ServeTLS, its "+
		"defaults: HTTP/2 offered, unused by these HTTP/1.1 clients) with `CurvePreferences: "+
		"[]tls.CurveID{tls.X25519}` (`-curves x25519`; Go's default would be X25519MLKEM768) and crypto/tls's "+
		"choice of suite, AES-128-GCM first on a CPU with AES instructions; nginx with `ssl_protocols TLSv1.2 "+
		"TLSv1.3`, `ssl_ecdh_curve X25519`, `ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256`, session "+
		"tickets on and no session cache (its default), keep-alive as for plaintext (see "+
		"`bench/nginx/nginx.conf.tmpl`). The X25519MLKEM768 figures start the Go servers with `-curves default`. "+
		"Session tickets are on everywhere (each server's defaults). wrk is built with OpenSSL; the load "+
		"tool's client is crypto/tls, %d connections in flight for the handshake figures.\n", tlsWorkers)
}

// tlsServerCommands writes, for the report, how the servers start for the HTTPS figures.
func (r *runner) tlsServerCommands(b *strings.Builder) {
	for _, mode := range []string{tlsX25519, tlsDefault} {
		for _, s := range r.res.Servers {
			if c, ok := r.serverCmds["tls-"+mode+":"+s]; ok {
				b.WriteString(c + "\n")
			}
		}
	}
}
