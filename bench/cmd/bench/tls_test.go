package main

import (
	"slices"
	"strings"
	"testing"
)

// TestTLSGroups checks that the tls group is the HTTPS figures and that http leaves them out.
func TestTLSGroups(t *testing.T) {
	if got := expandFigures([]string{"tls"}); !slices.Equal(got, tlsFigureIDs()) {
		t.Errorf("tls = %v", got)
	}
	for _, id := range expandFigures([]string{"http"}) {
		if slices.Contains(tlsFigureIDs(), id) || slices.Contains(wsFigureIDs(), id) {
			t.Errorf("http holds %s", id)
		}
	}
	s := &server{name: "fasthttp", lacks: map[string]string{}}
	tlsLacks(s)
	ng := &server{name: "nginx", lacks: map[string]string{}}
	tlsLacks(ng)
	if len(s.lacks) != len(tlsSpecs) || ng.lacks["tls-park"] == "" || ng.lacks["tls-hello"] != "" {
		t.Errorf("lacks: fasthttp %v, nginx %v", s.lacks, ng.lacks)
	}
}

// TestTLSSummary checks the HTTPS summary's cells: the ratio to nginx, to net/http where nginx
// is absent, and the difference from the plaintext figure.
func TestTLSSummary(t *testing.T) {
	cpu := &Metric{ID: "kib", Unit: "KiB", Digits: 2}
	plain := &Metric{ID: "kib", Digits: 2}
	park := &Metric{ID: "kib", Digits: 2}
	for round := 1; round <= 3; round++ {
		cpu.add("nginx", round, 14)
		cpu.add("dwell", round, 7)
		cpu.add("nethttp", round, 28)
		plain.add("dwell", round, 0.25)
		park.add("dwell", round, 10)
		park.add("nethttp", round, 40)
	}
	r := &runner{cfg: config{figures: []string{"tls-idle", "tls-park", "idle"}}}
	r.res = Results{Servers: []string{"nethttp", "nginx", "dwell"}, Figures: []*Figure{
		{ID: "tls-idle", Metrics: []*Metric{cpu}, Servers: []string{"nethttp", "nginx", "dwell"}},
		{ID: "tls-park", Metrics: []*Metric{park}, Servers: []string{"nethttp", "nginx", "dwell"},
			Absent: map[string]string{"nginx": "no long poll"}},
		{ID: "idle", Metrics: []*Metric{plain}},
	}}
	r.res.summarize()
	var b strings.Builder
	r.tlsSummary(&b)
	out := b.String()
	for _, want := range []string{
		"| idle TLS keep-alive connection: KiB of server RSS | 28.00 (2.00× nginx) | 14.00 | 7.00 (0.50× nginx) |",
		"| … over plaintext idle (difference of the medians) | — | — | +6.75 KiB |",
		"| parked long poll over TLS: KiB of server RSS | 40.00 | — | 10.00 (0.25× net/http) |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}
