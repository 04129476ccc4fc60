package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/template"
)

// h2loadTLS is h2load 1.52's output over TLS (progress lines left out).
const h2loadTLS = `starting benchmark...
spawning thread #0: 2 total client(s). Timing-based test with 0s of warm-up time and 1s of main duration for measurements.
TLS Protocol: TLSv1.3
Cipher: TLS_AES_128_GCM_SHA256
Server Temp Key: X25519 253 bits
Application protocol: h2
Main benchmark duration is over for thread #0. Stopping all clients.
Stopped all clients for thread #0

finished in 1.00s, 2308.00 req/s, 74.61KB/s
requests: 2308 total, 2312 started, 2308 done, 2306 succeeded, 2 failed, 0 errored, 1 timeout
status codes: 2306 2xx, 0 3xx, 2 4xx, 0 5xx
traffic: 74.61KB (76400) total, 9.13KB (9346) headers (space savings 95.00%), 24.79KB (25388) data
                     min         max         mean         sd        +/- sd
time for request:       49us    241.47ms      1.64ms     10.71ms    98.87%
time for connect:    18.24ms     27.85ms     23.05ms      6.80ms   100.00%
time to 1st byte:    32.60ms     32.67ms     32.63ms        48us   100.00%
req/s           :    1135.30     1164.80     1150.05       20.86   100.00%
`

// TestParseH2load checks what the driver reads of h2load's summary, and that an output without
// one is refused.
func TestParseH2load(t *testing.T) {
	s, err := parseH2load(h2loadTLS)
	if err != nil {
		t.Fatal(err)
	}
	if s.seconds != 1 || s.done != 2308 || s.succeeded != 2306 || s.failed != 2 || s.timeout != 1 {
		t.Errorf("counts: %+v", s)
	}
	if !near(s.maxUs, 241470) || !near(s.meanUs, 1640) {
		t.Errorf("times: max %v, mean %v", s.maxUs, s.meanUs)
	}
	if s.protocol != "h2" || s.tlsVersion != "TLSv1.3" || s.cipher != "TLS_AES_128_GCM_SHA256" || s.temp != "X25519" {
		t.Errorf("connection: %+v", s)
	}
	h2c := strings.NewReplacer("TLS Protocol: TLSv1.3\n", "", "Application protocol: h2\n", "Application protocol: h2c\n",
		"finished in 1.00s", "finished in 850.50ms").Replace(h2loadTLS)
	if s, err = parseH2load(h2c); err != nil || s.protocol != "h2c" || s.tlsVersion != "" || !near(s.seconds, 0.8505) {
		t.Errorf("h2c: %+v, %v", s, err)
	}
	if _, err := parseH2load("starting benchmark...\nApplication protocol: h2c\n"); err == nil {
		t.Error("an output without a summary was accepted")
	}
	for in, want := range map[string]float64{"717us": 717, "22.01ms": 22010, "2.08s": 2.08e6} {
		if got, err := h2loadDuration(in); err != nil || !near(got, want) {
			t.Errorf("%s = %v, %v; want %v", in, got, err, want)
		}
	}
}

// TestH2Groups checks the h2 group, that http leaves the HTTP/2 figures out, which of them need
// the certificate, and the -h2 flag's order.
func TestH2Groups(t *testing.T) {
	if got := expandFigures([]string{"h2"}); !slices.Equal(got, h2FigureIDs()) {
		t.Errorf("h2 = %v", got)
	}
	for _, id := range expandFigures([]string{"http"}) {
		if slices.Contains(h2FigureIDs(), id) {
			t.Errorf("http holds %s", id)
		}
	}
	if !hasH2TLS([]string{"hello", "h2-idle-tls"}) || hasH2TLS([]string{"h2-hello", "h2-park", "tls-hello"}) {
		t.Error("hasH2TLS")
	}
	if got, err := h2Wanted("dwell-uring,dwell,h2o,nethttp"); err != nil || !slices.Equal(got, []string{"nethttp", "h2o", "dwell", "dwell-uring"}) {
		t.Errorf("h2Wanted = %v, %v", got, err)
	}
	if _, err := h2Wanted("caddy"); err == nil {
		t.Error("an unknown contender was accepted")
	}
	for v, want := range map[string]bool{"nginx/1.22.1": false, "nginx/1.25.0": false, "nginx/1.25.1": true, "nginx/1.27.4": true, "": false} {
		if nginxHTTP2On(v) != want {
			t.Errorf("nginxHTTP2On(%q) = %v", v, !want)
		}
	}
}

// TestH2Templates renders nginx's and h2o's configurations for the HTTP/2 figures: http2 where
// this nginx takes it; h2o's /hello and /file from the files given, and its TLS block only over
// TLS.
func TestH2Templates(t *testing.T) {
	render := func(path string, data map[string]any) string {
		t.Helper()
		tmpl, err := template.ParseFiles(filepath.Join("..", "..", path))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := tmpl.Execute(&b, data); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	base := map[string]any{"Prefix": "/w", "Port": 8080, "File": "/f", "FSDir": "/fs", "Download": "/d", "User": "",
		"Conns": 7274, "Files": 14612, "TLS": false, "Cert": "/c.pem", "Key": "/k.pem", "Hello": "/w/hello.txt"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	if out := render("nginx/nginx.conf.tmpl", with("H2Listen", true)); !strings.Contains(out, "listen 127.0.0.1:8080 http2 backlog=4096;") ||
		strings.Contains(out, "http2 on;") {
		t.Errorf("nginx before 1.25.1:\n%s", out)
	}
	if out := render("nginx/nginx.conf.tmpl", with("H2On", true, "TLS", true)); !strings.Contains(out, "listen 127.0.0.1:8080 ssl backlog=4096;\n        http2 on;") {
		t.Errorf("nginx from 1.25.1:\n%s", out)
	}
	for line := range strings.SplitSeq(render("nginx/nginx.conf.tmpl", base), "\n") {
		if line = strings.TrimSpace(line); !strings.HasPrefix(line, "#") && strings.Contains(line, "http2") {
			t.Errorf("nginx for HTTP/1.1 has %q", line)
		}
	}
	plain := render("h2o/h2o.conf.tmpl", base)
	for _, want := range []string{"num-threads: 1\n", "max-connections: 7274\n", "port: 8080\n",
		"      /hello:\n        file.file: /w/hello.txt\n", "      /file:\n        file.file: /f\n"} {
		if !strings.Contains(plain, want) {
			t.Errorf("h2o lacks %q:\n%s", want, plain)
		}
	}
	if strings.Contains(plain, "ssl:") {
		t.Errorf("h2o on plaintext has TLS:\n%s", plain)
	}
	if secure := render("h2o/h2o.conf.tmpl", with("TLS", true, "User", "root")); !strings.Contains(secure, "  ssl:\n    certificate-file: /c.pem\n    key-file: /k.pem\n") ||
		!strings.Contains(secure, "\nuser: root\nnum-threads: 1\n") {
		t.Errorf("h2o over TLS:\n%s", secure)
	}
}

// TestH2Summary checks the HTTP/2 summary's cells: the ratio to dwell, the absent servers.
func TestH2Summary(t *testing.T) {
	cpu := &Metric{ID: "cpu_us", Unit: "µs", Digits: 2}
	park := &Metric{ID: "kib", Unit: "KiB", Digits: 2}
	for round := 1; round <= 3; round++ {
		cpu.add("dwell", round, 2)
		cpu.add("nginx", round, 4)
		cpu.add("h2o", round, 3)
		cpu.add("nethttp", round, 10)
		park.add("dwell", round, 4)
		park.add("nethttp", round, 6)
	}
	servers := []string{"nethttp", "nginx", "h2o", "dwell"}
	r := &runner{cfg: config{figures: []string{"h2-hello", "h2-park"}}}
	r.res = Results{Figures: []*Figure{
		{ID: "h2-hello", Metrics: []*Metric{cpu}, Servers: servers, Refs: []string{h2Ref}},
		{ID: "h2-park", Metrics: []*Metric{park}, Servers: servers, Refs: []string{h2Ref},
			Absent: map[string]string{"nginx": "no long poll", "h2o": "no long poll"}},
	}}
	r.res.summarize()
	var b strings.Builder
	r.h2Summary(&b)
	out := b.String()
	for _, want := range []string{
		"| figure | nethttp | nginx | h2o | dwell |",
		"server CPU µs per request | 10.00 (5.00× dwell) | 4.00 (2.00× dwell) | 3.00 (1.50× dwell) | 2.00 |",
		"KiB of server RSS | 6.00 (1.50× dwell) | — | — | 4.00 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if _, ok := cpu.Summary["nginx"].Ratios[baseline]; ok {
		t.Error("an HTTP/2 figure has ratios to net/http")
	}
}
