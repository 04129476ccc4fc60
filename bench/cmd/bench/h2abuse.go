package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The HTTP/2 abuse figures: each contender of the HTTP/2 figures, alone on CPU 0 and serving
// over TLS as in h2-hello-tls, under one attack for abuseSecs while a normal client on a
// connection of its own asks GET /hello every abusePace and times each answer. The load tool's
// h2-abuse mode (cmd/load/h2abuse.go) is the normal client and samples the server's RSS every
// 100 ms; its attacker is a child process at niceness 10 on the same CPU 1, so that the normal
// client's wake-ups are not queued behind the attacker's. Each figure is measured once (one
// round: the figures are held against targets, not compared round by round), and the targets
// are dwell's: RSS growth at most abuseTargetMiB and every normal request answered, p99 at most
// abuseTargetP99ms.

// abuse is one attack of the abuse figures: its streams per connection, for the attacks made of
// streams, and the path they ask for.
type abuse struct {
	id, attack, name, title string
	conns                   int
	streams                 int
	path                    string
}

// The abuse figures' load.
const (
	// abuseSecs is each attack's length (abuseQuickSecs with -quick).
	abuseSecs      = 10
	abuseQuickSecs = 5
	// abusePace is the normal client's interval between requests: 500 a second, one at a time.
	abusePace = 2 * time.Millisecond
	// abuseFloodConns attack with each flood; abuseZWConns × abuseZWStreams streams hold zero
	// windows; abuseFloodConns × abuseTWStreams streams are kept open on 1-byte windows.
	abuseFloodConns = 10
	abuseZWConns    = 100
	abuseZWStreams  = 100
	abuseTWStreams  = 10
	// abuseTWPath is what the tiny windows' streams ask for: the 254-byte file, 254 one-byte
	// DATA frames a stream where /hello would be 11.
	abuseTWPath = "/file"
	// abuseWriteTimeout is the zero-window figure's write timeout, for every server that has
	// one.
	abuseWriteTimeout = 5 * time.Second
	// dwell's targets.
	abuseTargetMiB   = 16
	abuseTargetP99ms = 20
)

var abuses = []abuse{
	{"h2-abuse-reset", "reset", "rapid reset", "rapid reset (CVE-2023-44487): HEADERS then RST_STREAM", abuseFloodConns, 0, "/hello"},
	{"h2-abuse-made-you-reset", "made-you-reset", "MadeYouReset", "MadeYouReset (CVE-2025-8671): HEADERS then a WINDOW_UPDATE of 0", abuseFloodConns, 0, "/hello"},
	{"h2-abuse-continuation", "continuation", "CONTINUATION flood", "CONTINUATION flood (CVE-2024-27316): one field block that never ends", abuseFloodConns, 0, "/hello"},
	{"h2-abuse-settings", "settings", "SETTINGS flood", "SETTINGS flood, the ACKs never read", abuseFloodConns, 0, "/hello"},
	{"h2-abuse-ping", "ping", "PING flood", "PING flood, the ACKs never read", abuseFloodConns, 0, "/hello"},
	{"h2-abuse-priority", "priority", "PRIORITY flood", "PRIORITY flood on ever new streams", abuseFloodConns, 0, "/hello"},
	{"h2-abuse-empty-data", "empty-data", "empty DATA flood", "empty DATA flood on open streams", abuseFloodConns, 0, "/hello"},
	{"h2-abuse-window-update", "window-update", "WINDOW_UPDATE flood", "WINDOW_UPDATE flood, increments of 1 on the connection", abuseFloodConns, 0, "/hello"},
	{"h2-abuse-zero-window", "zero-window", "zero-window streams", fmt.Sprintf("%d streams on each of %d connections, "+
		"INITIAL_WINDOW_SIZE 0, no WINDOW_UPDATE ever; write timeout %s (h2o has none)", abuseZWStreams, abuseZWConns, spell(abuseWriteTimeout)),
		abuseZWConns, abuseZWStreams, "/hello"},
	{"h2-abuse-tiny-window", "tiny-window", "1-byte windows", fmt.Sprintf("1-byte windows: INITIAL_WINDOW_SIZE 1, %d streams of GET %s "+
		"on each, every DATA frame's bytes given back at once", abuseTWStreams, abuseTWPath), abuseFloodConns, abuseTWStreams, abuseTWPath},
}

func abuseMetrics(zeroWindow bool) []Metric {
	m := []Metric{
		{ID: "rss_mib", Label: "server RSS growth, peak during the attack", Unit: "MiB", Digits: 1},
		{ID: "rss_end_mib", Label: "server RSS growth, at the attack's end", Unit: "MiB", Digits: 1},
		{ID: "cpu_pct", Label: "server CPU during the attack, of its core", Unit: "%", Digits: 0},
		{ID: "normal_p99_ms", Label: fmt.Sprintf("normal client (GET /hello every %s): p99 latency", spell(abusePace)), Unit: "ms", Digits: 2},
		{ID: "normal_max_ms", Label: "normal client: slowest answer", Unit: "ms", Digits: 1},
		{ID: "normal_ok", Label: "normal client: requests answered", Unit: ""},
		{ID: "normal_failed", Label: "normal client: requests failed (no answer in 1 s, a reset, the connection lost)", Unit: ""},
		{ID: "atk_frames", Label: "attacker: frames written to its sockets (those a server never read included)", Unit: ""},
		{ID: "atk_closed", Label: "attacker: connections the server ended (the attacker reconnected)", Unit: ""},
		{ID: "atk_goaways", Label: "attacker: GOAWAYs received", Unit: ""},
		{ID: "atk_first_s", Label: "attacker: first connection ended by the server, after", Unit: "s", Digits: 2},
		{ID: "atk_rsts", Label: "attacker: RST_STREAMs received", Unit: ""},
	}
	if zeroWindow {
		m = append(m,
			Metric{ID: "atk_opened", Label: "attacker: zero-window streams opened", Unit: ""},
			Metric{ID: "atk_held", Label: "attacker: streams the server still held at the end (neither ended nor reset)", Unit: ""},
			Metric{ID: "atk_first_rst_s", Label: "attacker: first RST_STREAM, after", Unit: "s", Digits: 2},
			Metric{ID: "atk_last_rst_s", Label: "attacker: last RST_STREAM, after", Unit: "s", Digits: 2})
	}
	return append(m, Metric{ID: "other_pct", Label: "CPU 0 busy outside the server (noise)", Unit: "%", Digits: 1})
}

// h2AbuseSpecs are the abuse figures, one per attack.
var h2AbuseSpecs = func() []*figureSpec {
	var out []*figureSpec
	for _, a := range abuses {
		zw := a.attack == "zero-window"
		title := fmt.Sprintf("HTTP/2 abuse over TLS: %s, %d connections", a.title, a.conns)
		if zw {
			title = "HTTP/2 abuse over TLS: zero-window streams, " + a.title
		}
		s := &figureSpec{id: a.id, title: title, h2: true, tls: tlsX25519, once: true,
			metrics: abuseMetrics(zw), measure: h2AbuseFigure(a)}
		if zw {
			s.writeTimeout = abuseWriteTimeout
		}
		out = append(out, s)
	}
	return out
}()

func init() {
	// The abuse figures are HTTP/2 figures: the h2 group holds them, and their contenders are
	// the HTTP/2 ones.
	h2Specs = append(h2Specs, h2AbuseSpecs...)
	specs = append(specs, h2AbuseSpecs...)
	for _, id := range []string{"rss_end_mib", "cpu_pct", "normal_p99_ms", "normal_max_ms", "normal_ok", "normal_failed", "atk_frames",
		"atk_closed", "atk_goaways", "atk_first_s", "atk_rsts", "atk_opened", "atk_held", "atk_first_rst_s", "atk_last_rst_s"} {
		noRatio[id] = true
	}
	for _, a := range abuses {
		meanings[a.id] = abuseMeanings[a.attack]
	}
}

// h2AbuseFigureIDs are the abuse figures' ids, in order.
func h2AbuseFigureIDs() []string {
	ids := make([]string, len(h2AbuseSpecs))
	for i, s := range h2AbuseSpecs {
		ids[i] = s.id
	}
	return ids
}

func (r *runner) abuseSecs() int {
	if r.cfg.quick {
		return abuseQuickSecs
	}
	return abuseSecs
}

// spell writes a duration for the report: "2 ms", "5 s".
func spell(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// nginxTimeout is nginx's spelling of a timeout ("5s"), empty for none.
func nginxTimeout(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return strconv.Itoa(int(d.Round(time.Second)/time.Second)) + "s"
}

// abuseResult is what the driver reads of the load tool's h2-abuse output.
type abuseResult struct {
	CPUPct    float64 `json:"cpu_pct"`
	OtherPct  float64 `json:"other_pct"`
	RSSBefore int64   `json:"rss_before_bytes"`
	RSSGrowth int64   `json:"rss_peak_growth_bytes"`
	RSSEnd    int64   `json:"rss_end_bytes"`
	Normal    struct {
		Sent       int     `json:"sent"`
		Answered   int     `json:"answered"`
		Failed     int     `json:"failed"`
		Reconnects int     `json:"reconnects"`
		P99us      float64 `json:"p99_us"`
		MaxUs      float64 `json:"max_us"`
		FirstFail  string  `json:"first_failure"`
		Negotiated string  `json:"negotiated"`
	} `json:"normal"`
	Attacker struct {
		Frames      int64            `json:"frames"`
		Connections int64            `json:"connections"`
		DialErrors  int64            `json:"dial_errors"`
		Closed      int64            `json:"closed"`
		FirstCloseS float64          `json:"first_close_s"`
		Goaways     int64            `json:"goaways"`
		GoawayCodes map[string]int64 `json:"goaway_codes"`
		Rsts        int64            `json:"rsts"`
		RstCodes    map[string]int64 `json:"rst_codes"`
		FirstRstS   float64          `json:"first_rst_s"`
		LastRstS    float64          `json:"last_rst_s"`
		Responses   int64            `json:"responses"`
		Opened      int64            `json:"opened"`
		Held        int64            `json:"held"`
		Ended       int64            `json:"ended"`
		DataFrames  int64            `json:"data_frames"`
		DataBytes   int64            `json:"data_bytes"`
		FirstError  string           `json:"first_error"`
	} `json:"attacker"`
}

// values are the figure's metrics from one run.
func (a *abuseResult) values(zeroWindow bool) map[string]float64 {
	v := map[string]float64{
		"rss_mib":       float64(a.RSSGrowth) / (1 << 20),
		"rss_end_mib":   float64(a.RSSEnd-a.RSSBefore) / (1 << 20),
		"cpu_pct":       a.CPUPct,
		"normal_p99_ms": a.Normal.P99us / 1e3,
		"normal_max_ms": a.Normal.MaxUs / 1e3,
		"normal_ok":     float64(a.Normal.Answered),
		"normal_failed": float64(a.Normal.Failed),
		"atk_frames":    float64(a.Attacker.Frames),
		"atk_closed":    float64(a.Attacker.Closed),
		"atk_goaways":   float64(a.Attacker.Goaways),
		"atk_rsts":      float64(a.Attacker.Rsts),
		"other_pct":     a.OtherPct,
	}
	if a.Attacker.FirstCloseS > 0 {
		v["atk_first_s"] = a.Attacker.FirstCloseS
	}
	if zeroWindow {
		v["atk_opened"] = float64(a.Attacker.Opened)
		v["atk_held"] = float64(a.Attacker.Held)
		if a.Attacker.FirstRstS > 0 {
			v["atk_first_rst_s"], v["atk_last_rst_s"] = a.Attacker.FirstRstS, a.Attacker.LastRstS
		}
	}
	return v
}

// note says what the server sent the attacker (GOAWAY codes, resets), with streams (the
// tiny-window attack's) how its streams were answered, how its first connection ended, and the
// normal client's first failure, if any.
func (a *abuseResult) note(streams bool) string {
	var sent []string
	for _, k := range sortedKeys(a.Attacker.GoawayCodes) {
		sent = append(sent, fmt.Sprintf("GOAWAY %s ×%s", k, fmtNum(float64(a.Attacker.GoawayCodes[k]), 0)))
	}
	for _, k := range sortedKeys(a.Attacker.RstCodes) {
		sent = append(sent, fmt.Sprintf("RST_STREAM %s ×%s", k, fmtNum(float64(a.Attacker.RstCodes[k]), 0)))
	}
	parts := []string{"the attacker received no GOAWAY and no RST_STREAM"}
	if len(sent) > 0 {
		parts[0] = "the server sent the attacker " + strings.Join(sent, ", ")
	}
	if streams {
		// How the server framed its answers: one byte a DATA frame is what the windows allow.
		p := fmt.Sprintf("the attacker opened %s streams, of which %s were answered whole, and read %s DATA frames "+
			"carrying %s bytes", fmtNum(float64(a.Attacker.Opened), 0), fmtNum(float64(a.Attacker.Ended), 0),
			fmtNum(float64(a.Attacker.DataFrames), 0), fmtNum(float64(a.Attacker.DataBytes), 0))
		if a.Attacker.DataFrames > 0 {
			p += fmt.Sprintf(" (%.2f a frame)", float64(a.Attacker.DataBytes)/float64(a.Attacker.DataFrames))
		}
		parts = append(parts, p)
	}
	if a.Attacker.FirstError != "" {
		parts = append(parts, fmt.Sprintf("the first connection the server ended ended with %q", shortErr(a.Attacker.FirstError)))
	}
	if a.Attacker.DialErrors > 0 {
		parts = append(parts, fmt.Sprintf("%s of the attacker's connection attempts failed", fmtNum(float64(a.Attacker.DialErrors), 0)))
	}
	if a.Normal.FirstFail != "" {
		parts = append(parts, fmt.Sprintf("the normal client's first failure: %q", shortErr(a.Normal.FirstFail)))
	}
	return strings.Join(parts, "; ")
}

// shortErr drops the addresses from a network error, which differ from run to run.
func shortErr(s string) string {
	if i := strings.LastIndex(s, ": "); i >= 0 && strings.Contains(s[:i], "127.0.0.1") {
		return s[i+2:]
	}
	return s
}

// abuseArgs are the load tool's arguments for one attack on the started server rs.
func (r *runner) abuseArgs(a abuse, rs *running) []string {
	args := []string{"h2-abuse", "-addr", rs.addr, "-pid", strconv.Itoa(rs.pid), "-attack", a.attack,
		"-d", fmt.Sprintf("%ds", r.abuseSecs()), "-conns", strconv.Itoa(a.conns), "-path", "/hello",
		"-attack-path", a.path, "-pace", abusePace.String(), "-server-cpu", serverCPU,
		"-tls", "-cert", r.cert, "-curves", tlsX25519}
	if a.streams > 0 {
		args = append(args, "-streams", strconv.Itoa(a.streams))
	}
	return args
}

// h2AbuseFigure runs the load tool's h2-abuse mode against the started server. A run during
// which CPU 0 was busy with something else is measured again, as the others are, but on a
// server started afresh: an attack leaves the server's memory grown (its allocator keeps what
// it took), and a second attack on it would measure the growth from there.
func h2AbuseFigure(a abuse) func(context.Context, *runner, *measurement) (map[string]float64, error) {
	return func(ctx context.Context, r *runner, m *measurement) (map[string]float64, error) {
		zw := a.attack == "zero-window"
		once := func(rs *running) (map[string]float64, string, error) {
			var res abuseResult
			if err := r.runLoad(ctx, m, &res, r.abuseArgs(a, rs)...); err != nil {
				return nil, "", err
			}
			return res.values(zw), res.note(a.attack == "tiny-window"), nil
		}
		vals, note, err := once(m.rs)
		m.note = note
		if err != nil || vals["other_pct"] <= noisyPct || r.retries <= 0 {
			return vals, err
		}
		r.retries--
		r.logf("%s: CPU %s was %.0f%% busy outside the server; measuring again on a fresh server", m.srv.name, serverCPU, vals["other_pct"])
		cmds := len(m.cmds)
		defer func() { m.cmds = m.cmds[:cmds] }()
		rs, err := r.startServer(ctx, m.srv, tlsX25519)
		if err != nil {
			r.logf("%s: %v; keeping the first measurement", m.srv.name, err)
			return vals, nil
		}
		defer r.stopServer(rs)
		again, note, err := once(rs)
		if err != nil || again["other_pct"] >= vals["other_pct"] {
			return vals, nil
		}
		m.note = note
		return again, nil
	}
}

// abuseMeanings explain each attack in the report.
var abuseMeanings = map[string]string{
	"reset": fmt.Sprintf("Rapid reset (CVE-2023-44487): on each of %d connections the attacker sends a GET /hello's "+
		"HEADERS and at once its RST_STREAM CANCEL, over and over, reading and dropping what the server sends; "+
		"when the server ends a connection the attacker opens another (a TLS handshake) and goes on. A server "+
		"that starts a handler for every stream does the work of a request for a frame pair that costs the "+
		"client nothing.", abuseFloodConns),
	"made-you-reset": fmt.Sprintf("MadeYouReset (CVE-2025-8671): on each of %d connections the attacker sends a "+
		"GET /hello's HEADERS and at once a WINDOW_UPDATE of 0 on its stream, a stream error the server must "+
		"answer with RST_STREAM (RFC 9113 §6.9), over and over, reading and dropping what the server sends, and "+
		"reconnecting as for rapid reset. The stream ends as under rapid reset, but the reset is the server's "+
		"own: a bound on the resets a client sends does not see it.", abuseFloodConns),
	"continuation": "CONTINUATION flood (CVE-2024-27316): one HEADERS without END_HEADERS, then CONTINUATION " +
		"frames of never-indexed header fields (32 fields of 32 bytes each, about 1.5 KiB a frame) without end. " +
		"A server that keeps the block until it ends, or decodes every field of it, pays in memory or CPU; the " +
		"attacker reconnects whenever a connection is ended.",
	"settings": "SETTINGS flood: SETTINGS frames (ENABLE_PUSH 0) as fast as the server takes them, and the " +
		"socket never read, so that every ACK the server owes waits on its side: a server that queues them " +
		"without bound grows, one that stops reading holds the attacker back, one that ends the connection " +
		"has the attacker reconnect (it then reads, briefly, what the server had sent, for a GOAWAY).",
	"ping": "PING flood: PING frames the same way, their ACKs never read.",
	"priority": "PRIORITY flood: PRIORITY frames for ever new idle streams, each depending on the one before " +
		"(a priority tree that grows, for a server that keeps one).",
	"empty-data": "Empty DATA flood: the HEADERS of a GET that leaves its stream open, then 0-length DATA " +
		"frames on it, 1,000 to a stream (the last ending it) before the next stream: frames that carry " +
		"nothing and cost the server a frame's work each.",
	"window-update": fmt.Sprintf("WINDOW_UPDATE flood: on each of %d connections, WINDOW_UPDATE frames of "+
		"increment 1 on the connection (stream 0), as fast as the server takes them, reading what the server "+
		"sends (its GOAWAYs counted); when the server ends a connection the attacker opens another. Each frame "+
		"is legal and costs the server a frame's work and an addition to its send window, and the client "+
		"nothing; 10 s of increments of 1 stay far below the 2^31-1 a window may reach, so a server that takes "+
		"them all is given no flow-control overflow to end the connection for.", abuseFloodConns),
	"tiny-window": fmt.Sprintf("1-byte windows: on each of %d connections the attacker announces "+
		"SETTINGS_INITIAL_WINDOW_SIZE 1 and keeps %d streams of GET %s (the 254-byte file) open, reading all "+
		"the time and giving back the bytes of every DATA frame as soon as it reads it: a WINDOW_UPDATE of the "+
		"frame's length on its stream (unless the frame ended the stream, whose window is then of no use) and "+
		"one on the connection. The server can send each answer only one byte at a time, a DATA frame out and "+
		"two WINDOW_UPDATEs in for every byte, 254 frames a stream; when a stream ends or is reset the attacker "+
		"opens another, and when the server ends a connection, it opens another connection. The note under the "+
		"table gives the streams opened and answered whole, and the DATA frames read with the bytes they "+
		"carried: how much of that work the server did.", abuseFloodConns, abuseTWStreams, abuseTWPath),
	"zero-window": fmt.Sprintf("Zero-window streams: %d connections (handshakes at the start), each announcing "+
		"SETTINGS_INITIAL_WINDOW_SIZE 0, then opening %d streams of GET /hello (at most the server's "+
		"SETTINGS_MAX_CONCURRENT_STREAMS) and never sending a WINDOW_UPDATE: no answer can send its body, "+
		"and the server holds %s streams. The attacker reads what comes (acknowledging SETTINGS, "+
		"answering PINGs) and counts the resets; the streams neither ended nor reset at the end are the ones "+
		"the server still held. For this figure each server that has a write timeout runs with %s: dwell "+
		"`-write-timeout` (Options.WriteTimeout: a response that has made no progress for it is reset; the "+
		"default is 30 s), net/http `-write-timeout` (http.Server.WriteTimeout, which over HTTP/2 is each "+
		"stream's from its start, the stream reset with INTERNAL_ERROR past it; no default), nginx "+
		"`send_timeout` (default 60 s); h2o 2.2 has no write timeout (its http2-idle-timeout, 600 s here, "+
		"does not run while streams are open), so it holds them.", abuseZWConns, abuseZWStreams,
		fmtNum(abuseZWConns*abuseZWStreams, 0), spell(abuseWriteTimeout)),
}

// abuseRow is one row of the abuse summary's tables: a figure and its attack.
type abuseRow struct {
	a abuse
	f *Figure
}

// h2AbuseSummary writes the abuse figures' summary: the server's RSS growth, the normal client's
// p99 and failures, the server's CPU, and what the server did to the attacker, an attack a row,
// the contenders in columns; then dwell's targets, met or not.
func (r *runner) h2AbuseSummary(b *strings.Builder) {
	var rows []abuseRow
	var servers []string
	for _, a := range abuses {
		f := r.res.figure(a.id)
		if f == nil {
			continue
		}
		rows = append(rows, abuseRow{a, f})
		for _, s := range f.Servers {
			if !slices.Contains(servers, s) {
				servers = append(servers, s)
			}
		}
	}
	if len(rows) == 0 || len(servers) == 0 {
		return
	}
	slices.SortFunc(servers, byOrder(h2Contenders))
	secs := r.abuseSecs()
	b.WriteString("## HTTP/2 under abuse\n\n")
	fmt.Fprintf(b, "Each HTTP/2 contender, alone on CPU %s and serving over TLS as in the h2-hello-tls figure, under "+
		"one attack for %d s (one run each), while a normal client on a connection of its own asks GET /hello "+
		"every %s, one request at a time, and times each answer (a request unanswered within 1 s, reset or "+
		"lost with its connection is a failure; the client then reconnects). The attacker (the load tool's "+
		"h2-abuse mode, `cmd/load/h2abuse.go`) runs on CPU %s beside the normal client, in a process of its own "+
		"at niceness 10, so that the normal client's latency is the server's and not the scheduler's; it "+
		"reconnects whenever the server ends one of its connections. The server's RSS is sampled every 100 ms; "+
		"its growth is the peak over the attack minus the RSS before it. dwell's targets: RSS growth at most "+
		"%d MiB, every normal request answered, p99 at most %d ms. The attacks, the figures' full tables and "+
		"what the server sent the attacker are under the figures below.\n\n",
		serverCPU, secs, spell(abusePace), loadCPU, abuseTargetMiB, abuseTargetP99ms)
	header := fmt.Sprintf("| attack | %s |\n|---|%s\n", strings.Join(servers, " | "), strings.Repeat("---|", len(servers)))
	table := func(title string, cell func(f *Figure, srv string) string) {
		fmt.Fprintf(b, "%s\n\n%s", title, header)
		for _, row := range rows {
			cells := make([]string, len(servers))
			for i, s := range servers {
				cells[i] = cell(row.f, s)
			}
			fmt.Fprintf(b, "| %s | %s |\n", row.a.name, strings.Join(cells, " | "))
		}
		b.WriteString("\n")
	}
	table("Server RSS growth, MiB: the peak during the attack minus the RSS before it (and at the attack's end):", func(f *Figure, s string) string {
		return abuseCell(f, s, "rss_mib", func(v map[string]float64) string {
			c := fmt.Sprintf("%+.1f", v["rss_mib"])
			if end, ok := v["rss_end_mib"]; ok {
				c += fmt.Sprintf(" (%+.1f)", end)
			}
			return c
		})
	})
	table("Normal client: p99 latency, ms; requests failed of those sent, when any:", func(f *Figure, s string) string {
		return abuseCell(f, s, "normal_p99_ms", func(v map[string]float64) string {
			c := fmtNum(v["normal_p99_ms"], 2)
			if v["normal_failed"] > 0 {
				c += fmt.Sprintf(" (%s of %s failed)", fmtNum(v["normal_failed"], 0), fmtNum(v["normal_failed"]+v["normal_ok"], 0))
			}
			return c
		})
	})
	table("Server CPU during the attack, % of its core:", func(f *Figure, s string) string {
		return abuseCell(f, s, "cpu_pct", func(v map[string]float64) string { return fmtNum(v["cpu_pct"], 0) })
	})
	table("What the server did to the attacker: connections it ended (the first after how long), "+
		"GOAWAYs, resets; for the zero-window streams, those still held at the end of those opened:",
		func(f *Figure, s string) string {
			return abuseCell(f, s, "atk_closed", abuseServerAnswer)
		})
	if pass, miss := abuseTargets(rows); len(pass)+len(miss) > 0 {
		if len(miss) == 0 {
			fmt.Fprintf(b, "dwell meets its targets under every attack measured (%s).\n\n", strings.Join(pass, ", "))
		} else {
			fmt.Fprintf(b, "dwell misses its targets under: %s", strings.Join(miss, "; "))
			if len(pass) > 0 {
				fmt.Fprintf(b, ". It meets them under: %s", strings.Join(pass, ", "))
			}
			b.WriteString(".\n\n")
		}
	}
}

// abuseCell is a cell of the abuse summary: what show makes of the server's values, or why
// there are none.
func abuseCell(f *Figure, srv, key string, show func(map[string]float64) string) string {
	if _, ok := f.Absent[srv]; ok {
		return "—"
	}
	v := abuseValues(f, srv)
	if _, ok := v[key]; !ok {
		if len(f.Failed[srv]) > 0 {
			return "failed"
		}
		return "n/a"
	}
	return show(v)
}

// abuseValues are a server's medians of a figure's metrics, by id.
func abuseValues(f *Figure, srv string) map[string]float64 {
	v := map[string]float64{}
	for _, m := range f.Metrics {
		if s, ok := m.Summary[srv]; ok {
			v[m.ID] = s.Median
		}
	}
	return v
}

// abuseServerAnswer is the attacker's side of a cell: "3 ended (first 1.62 s), 3 GOAWAY, 0
// RST", with "held 0 of 10,000" for the zero-window streams.
func abuseServerAnswer(v map[string]float64) string {
	var parts []string
	if n := v["atk_closed"]; n > 0 {
		p := fmtNum(n, 0) + " ended"
		if t, ok := v["atk_first_s"]; ok {
			p += fmt.Sprintf(" (first %.2f s)", t)
		}
		parts = append(parts, p)
	} else {
		parts = append(parts, "none ended")
	}
	parts = append(parts, fmtNum(v["atk_goaways"], 0)+" GOAWAY", fmtNum(v["atk_rsts"], 0)+" RST")
	if first, ok := v["atk_first_rst_s"]; ok {
		parts[len(parts)-1] += fmt.Sprintf(" (%.1f–%.1f s)", first, v["atk_last_rst_s"])
	}
	if opened, ok := v["atk_opened"]; ok {
		parts = append(parts, fmt.Sprintf("held %s of %s", fmtNum(v["atk_held"], 0), fmtNum(opened, 0)))
	}
	return strings.Join(parts, ", ")
}

// abuseTargets sorts the attacks dwell was measured under into those where it met its targets
// and those where it did not, with the figures that missed.
func abuseTargets(rows []abuseRow) (pass, miss []string) {
	for _, row := range rows {
		if _, absent := row.f.Absent[h2Ref]; absent {
			continue
		}
		if len(row.f.Failed[h2Ref]) > 0 {
			miss = append(miss, row.a.name+" (the measurement failed)")
			continue
		}
		v := abuseValues(row.f, h2Ref)
		if _, ok := v["rss_mib"]; !ok {
			continue
		}
		var why []string
		if v["rss_mib"] > abuseTargetMiB {
			why = append(why, fmt.Sprintf("RSS %+.1f MiB", v["rss_mib"]))
		}
		if v["normal_failed"] > 0 {
			why = append(why, fmt.Sprintf("%s normal requests failed", fmtNum(v["normal_failed"], 0)))
		}
		if v["normal_p99_ms"] > abuseTargetP99ms {
			why = append(why, fmt.Sprintf("p99 %.2f ms", v["normal_p99_ms"]))
		}
		if len(why) == 0 {
			pass = append(pass, row.a.name)
		} else {
			miss = append(miss, row.a.name+" ("+strings.Join(why, ", ")+")")
		}
	}
	return pass, miss
}
