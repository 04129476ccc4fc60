package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/template"
	"time"
)

// TestH2AbuseGroups checks the h2abuse group, that h2 holds it, and the abuse figures' specs:
// HTTP/2 over TLS, measured once, the zero-window one alone with a write timeout.
func TestH2AbuseGroups(t *testing.T) {
	ids := h2AbuseFigureIDs()
	if len(ids) != len(abuses) || ids[0] != "h2-abuse-reset" || ids[len(ids)-1] != "h2-abuse-tiny-window" ||
		!slices.Contains(ids, "h2-abuse-window-update") || !slices.Contains(ids, "h2-abuse-zero-window") {
		t.Fatalf("ids %v", ids)
	}
	if got := expandFigures([]string{"h2abuse"}); !slices.Equal(got, ids) {
		t.Errorf("h2abuse = %v", got)
	}
	h2 := expandFigures([]string{"h2"})
	for _, id := range ids {
		if !slices.Contains(h2, id) {
			t.Errorf("h2 lacks %s", id)
		}
		s := specFor(id)
		if s == nil || !s.h2 || s.tls != tlsX25519 || !s.once {
			t.Errorf("%s: %+v", id, s)
			continue
		}
		if (s.writeTimeout == abuseWriteTimeout) != (id == "h2-abuse-zero-window") || s.writeTimeout%time.Second != 0 {
			t.Errorf("%s: write timeout %v", id, s.writeTimeout)
		}
		if meanings[id] == "" {
			t.Errorf("%s: no meaning", id)
		}
	}
	if got := expandFigures([]string{"h2-hello", "h2abuse", "h2-abuse-ping"}); len(got) != 1+len(ids) {
		t.Errorf("duplicates kept: %v", got)
	}
	for _, id := range expandFigures([]string{"http"}) {
		if slices.Contains(ids, id) {
			t.Errorf("http holds %s", id)
		}
	}
	if !hasH2TLS([]string{"h2-abuse-ping"}) || !hasH2([]string{"h2-abuse-reset"}) {
		t.Error("an abuse figure is not an HTTP/2 figure over TLS")
	}
}

// TestAbuseWriteTimeout checks how a write timeout reaches the servers: -write-timeout for the
// Go HTTP/2 contenders, send_timeout in nginx's configuration, nothing without one.
func TestAbuseWriteTimeout(t *testing.T) {
	r := &runner{tools: map[string]string{"taskset": "/usr/bin/taskset"}, file: "/w/file", cert: "/c.pem", key: "/k.pem"}
	dwell := &server{name: "dwell", bin: "/w/bin/dwell", h2: true}
	if argv := strings.Join(r.argv(dwell, 8443, tlsX25519), " "); strings.Contains(argv, "-write-timeout") {
		t.Errorf("without a write timeout: %s", argv)
	}
	r.writeTimeout = abuseWriteTimeout
	argv := strings.Join(r.argv(dwell, 8443, tlsX25519), " ")
	if !strings.HasSuffix(argv, "-cert /c.pem -key /k.pem -curves x25519 -write-timeout 5s") {
		t.Errorf("with one: %s", argv)
	}
	plain := &server{name: "nethttp", bin: "/w/bin/nethttp"} // an HTTP/1.1 figure's server
	if argv := strings.Join(r.argv(plain, 8080, ""), " "); strings.Contains(argv, "-write-timeout") {
		t.Errorf("an HTTP/1.1 server: %s", argv)
	}
	for d, want := range map[time.Duration]string{0: "", 5 * time.Second: "5s", 1500 * time.Millisecond: "2s"} {
		if got := nginxTimeout(d); got != want {
			t.Errorf("nginxTimeout(%v) = %q, want %q", d, got, want)
		}
	}
	tmpl, err := template.ParseFiles(filepath.Join("..", "..", "nginx", "nginx.conf.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	render := func(send string) string {
		var b strings.Builder
		data := map[string]any{"Prefix": "/w", "Port": 8443, "File": "/f", "FSDir": "/fs", "Download": "/d", "User": "",
			"Conns": 100, "Files": 264, "TLS": true, "Cert": "/c.pem", "Key": "/k.pem", "H2On": false, "H2Listen": true,
			"SendTimeout": send}
		if err := tmpl.Execute(&b, data); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if out := render("5s"); !strings.Contains(out, "\n    send_timeout 5s;\n") {
		t.Errorf("nginx with send_timeout:\n%s", out)
	}
	without := render("")
	if strings.Contains(without, "send_timeout") || !strings.Contains(without, "server_tokens off;\n\n    server {") {
		t.Errorf("nginx without send_timeout:\n%s", without)
	}
}

// loadAbuseOutput is what the load tool's h2-abuse printed once (trimmed).
const loadAbuseOutput = `{"mode":"h2-abuse","attack":"reset","seconds":10.001,"cpu_ns":9000000000,"cpu_pct":89.99,
"other_pct":0.4,"rss_before_bytes":10485760,"rss_peak_bytes":26214400,"rss_end_bytes":20971520,
"rss_peak_growth_bytes":15728640,"rss_samples":100,
"normal":{"pace_us":2000,"sent":4990,"answered":4988,"failed":2,"reconnects":2,"p50_us":150,"p99_us":1840.5,
"p999_us":5000,"max_us":1000100,"first_failure":"read tcp 127.0.0.1:40000->127.0.0.1:8443: i/o timeout"},
"attacker":{"mode":"h2-attack","attack":"reset","conns":10,"seconds":10.2,"frames":1234567,"connections":13,
"reconnects":3,"dial_errors":0,"closed":3,"first_close_s":1.6,"goaways":3,
"goaway_codes":{"ENHANCE_YOUR_CALM \"too many resets\"":3},"rsts":0,"responses":10,"ended":10,"opened":0,
"held":0,"first_error":"EOF"}}`

// TestAbuseResult checks what the driver makes of the load tool's output: the metrics and the
// note under the table.
func TestAbuseResult(t *testing.T) {
	var res abuseResult
	if err := json.Unmarshal([]byte(loadAbuseOutput), &res); err != nil {
		t.Fatal(err)
	}
	v := res.values(false)
	want := map[string]float64{"rss_mib": 15, "rss_end_mib": 10, "cpu_pct": 89.99, "normal_p99_ms": 1.8405, "normal_max_ms": 1000.1,
		"normal_ok": 4988, "normal_failed": 2, "atk_frames": 1234567, "atk_closed": 3, "atk_goaways": 3,
		"atk_first_s": 1.6, "atk_rsts": 0, "other_pct": 0.4}
	for k, w := range want {
		if !near(v[k], w) {
			t.Errorf("%s = %v, want %v", k, v[k], w)
		}
	}
	if _, ok := v["atk_held"]; ok || len(v) != len(want) {
		t.Errorf("values %v", v)
	}
	if zw := res.values(true); zw["atk_held"] != 0 || zw["atk_opened"] != 0 || len(zw) != len(want)+2 {
		t.Errorf("zero-window values %v", zw)
	}
	res.Attacker.FirstRstS, res.Attacker.LastRstS = 5.01, 6.2
	if zw := res.values(true); zw["atk_first_rst_s"] != 5.01 || zw["atk_last_rst_s"] != 6.2 {
		t.Errorf("zero-window values %v", zw)
	}
	if v := res.values(false); len(v) != len(want) {
		t.Errorf("the resets' times outside the zero-window figure: %v", v)
	}
	note := res.note(false)
	for _, s := range []string{`the server sent the attacker GOAWAY ENHANCE_YOUR_CALM "too many resets" ×3; `, `ended with "EOF"`, `first failure: "i/o timeout"`} {
		if !strings.Contains(note, s) {
			t.Errorf("note %q lacks %q", note, s)
		}
	}
	if strings.Contains(note, "DATA frames") {
		t.Errorf("a flood's note speaks of streams: %q", note)
	}
	var quiet abuseResult
	if n := quiet.note(false); n != "the attacker received no GOAWAY and no RST_STREAM" {
		t.Errorf("note %q", n)
	}
	// The tiny-window attack's note says how the server framed its answers.
	quiet.Attacker.Opened, quiet.Attacker.Ended, quiet.Attacker.DataFrames, quiet.Attacker.DataBytes = 1210, 1200, 304800, 304800
	if n := quiet.note(true); n != "the attacker received no GOAWAY and no RST_STREAM; the attacker opened 1,210 streams, "+
		"of which 1,200 were answered whole, and read 304,800 DATA frames carrying 304,800 bytes (1.00 a frame)" {
		t.Errorf("tiny-window note %q", n)
	}
	// Every metric the figures declare is one the results fill in (the times of the resets
	// when there were any).
	for _, zw := range []bool{false, true} {
		v := res.values(zw)
		for _, m := range abuseMetrics(zw) {
			if _, ok := v[m.ID]; !ok && m.ID != "atk_first_rst_s" && m.ID != "atk_last_rst_s" {
				t.Errorf("zero-window %v: no value for %s", zw, m.ID)
			}
		}
	}
}

// TestAbuseArgs checks the load tool's command line for the attacks: the normal client on
// /hello always, the tiny windows' streams on the 254-byte /file, the zero-window and
// tiny-window streams per connection, and no -streams for a flood.
func TestAbuseArgs(t *testing.T) {
	r := &runner{cfg: config{quick: true}, cert: "/c.pem"}
	rs := &running{addr: "127.0.0.1:8443", pid: 42}
	byAttack := map[string]abuse{}
	for _, a := range abuses {
		byAttack[a.attack] = a
	}
	for attack, want := range map[string]string{
		"window-update": "h2-abuse -addr 127.0.0.1:8443 -pid 42 -attack window-update -d 5s -conns 10 -path /hello -attack-path /hello " +
			"-pace 2ms -server-cpu 0 -tls -cert /c.pem -curves x25519",
		"tiny-window": "h2-abuse -addr 127.0.0.1:8443 -pid 42 -attack tiny-window -d 5s -conns 10 -path /hello -attack-path /file " +
			"-pace 2ms -server-cpu 0 -tls -cert /c.pem -curves x25519 -streams 10",
		"zero-window": "h2-abuse -addr 127.0.0.1:8443 -pid 42 -attack zero-window -d 5s -conns 100 -path /hello -attack-path /hello " +
			"-pace 2ms -server-cpu 0 -tls -cert /c.pem -curves x25519 -streams 100",
	} {
		a, ok := byAttack[attack]
		if !ok {
			t.Errorf("no %s figure", attack)
			continue
		}
		if got := strings.Join(r.abuseArgs(a, rs), " "); got != want {
			t.Errorf("%s:\n got %s\nwant %s", attack, got, want)
		}
	}
}

// TestH2AbuseSummary renders the abuse summary from two attacks: a row per attack, a column
// per contender, the absent and failed ones said so, and dwell's targets met or missed.
func TestH2AbuseSummary(t *testing.T) {
	servers := []string{"nethttp", "nginx", "h2o", "dwell"}
	fig := func(id string, zw bool, vals map[string]map[string]float64) *Figure {
		f := &Figure{ID: id, Servers: servers, Refs: []string{h2Ref}}
		for _, m := range abuseMetrics(zw) {
			mt := &Metric{ID: m.ID, Unit: m.Unit, Digits: m.Digits}
			for srv, v := range vals {
				if x, ok := v[m.ID]; ok {
					mt.add(srv, 1, x)
				}
			}
			f.Metrics = append(f.Metrics, mt)
		}
		return f
	}
	calm := func(rss, p99, failed float64) map[string]float64 {
		return map[string]float64{"rss_mib": rss, "cpu_pct": 50, "normal_p99_ms": p99, "normal_max_ms": 30, "normal_ok": 5000 - failed,
			"normal_failed": failed, "atk_frames": 1e6, "atk_closed": 0, "atk_goaways": 0, "atk_rsts": 0, "other_pct": 0}
	}
	goaway := calm(14.8, 3, 0)
	goaway["rss_end_mib"] = 2.5
	goaway["atk_closed"], goaway["atk_first_s"] = 4, 1.6
	reset := fig("h2-abuse-reset", false, map[string]map[string]float64{
		"nethttp": goaway, "nginx": calm(3.7, 1, 0), "dwell": calm(1.2, 0.5, 0)})
	reset.Absent = map[string]string{"h2o": "not installed"}
	zwVals := map[string]map[string]float64{"nethttp": calm(118, 2, 0), "nginx": calm(101, 2, 0), "dwell": calm(40, 25, 3)}
	for srv, v := range zwVals {
		v["atk_opened"], v["atk_held"] = 10000, 0
		if srv == "nginx" {
			v["atk_held"] = 10000
		}
	}
	zw := fig("h2-abuse-zero-window", true, zwVals)
	zw.fail("h2o", "round 1: load h2-abuse: exit status 1")
	r := &runner{cfg: config{figures: []string{"h2-abuse-reset", "h2-abuse-zero-window"}}}
	r.res = Results{Figures: []*Figure{reset, zw}}
	r.res.summarize()
	var b strings.Builder
	r.h2AbuseSummary(&b)
	out := b.String()
	for _, want := range []string{
		"## HTTP/2 under abuse\n",
		"| attack | nethttp | nginx | h2o | dwell |",
		"| rapid reset | +14.8 (+2.5) | +3.7 | — | +1.2 |",
		"| zero-window streams | +118.0 | +101.0 | failed | +40.0 |",
		"| zero-window streams | 2.00 | 2.00 | failed | 25.00 (3 of 5,000 failed) |",
		"| rapid reset | 4 ended (first 1.60 s), 0 GOAWAY, 0 RST | none ended, 0 GOAWAY, 0 RST | — | none ended, 0 GOAWAY, 0 RST |",
		"held 10,000 of 10,000 | failed | none ended, 0 GOAWAY, 0 RST, held 0 of 10,000 |",
		"dwell misses its targets under: zero-window streams (RSS +40.0 MiB, 3 normal requests failed, p99 25.00 ms). It meets them under: rapid reset.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	r.res = Results{Figures: []*Figure{reset}}
	r.res.summarize()
	b.Reset()
	r.h2AbuseSummary(&b)
	if !strings.Contains(b.String(), "dwell meets its targets under every attack measured (rapid reset).") {
		t.Errorf("targets met:\n%s", b.String())
	}
	r.res = Results{}
	b.Reset()
	r.h2AbuseSummary(&b)
	if b.Len() != 0 {
		t.Errorf("a run without abuse figures has an abuse summary:\n%s", b.String())
	}
}
