package main

import (
	"math"
	"slices"
	"testing"
)

// TestRatiosPairRounds checks that ratios divide by the reference's value of the same round,
// skip rounds the reference lacks, and take the median of what is left.
func TestRatiosPairRounds(t *testing.T) {
	m := &Metric{ID: "cpu_us", Digits: 2}
	for round, v := range map[int]float64{1: 10, 2: 20, 3: 40} {
		m.add("nethttp", round, v)
	}
	m.add("nginx", 1, 5)
	m.add("nginx", 3, 8) // nginx failed round 2
	m.add("fasthttp", 1, 0.001)
	for round, v := range map[int]float64{1: 5, 2: 10, 3: 12} {
		m.add("dwell", round, v)
	}
	slices.SortFunc(m.Samples["dwell"], func(a, b Sample) int { return a.Round - b.Round })
	res := &Results{Figures: []*Figure{{ID: "hello", Metrics: []*Metric{m}}}}
	res.summarize()

	sum := m.Summary["dwell"]
	if q, ok := sum.ratio("nethttp"); !ok || !near(q, 0.5) {
		t.Errorf("ratio to nethttp = %v, %v; want 0.5 (0.5, 0.5, 0.3)", q, ok)
	}
	nginx := sum.Ratios["nginx"]
	if len(nginx.Rounds) != 2 || nginx.Rounds[0] != (Sample{1, 1}) || nginx.Rounds[1] != (Sample{3, 1.5}) {
		t.Errorf("rounds over nginx = %v, want round 1: 1, round 3: 1.5", nginx.Rounds)
	}
	if !near(nginx.Median, 1.25) {
		t.Errorf("median over nginx = %v, want 1.25", nginx.Median)
	}
	if _, ok := sum.Ratios["fasthttp"]; ok {
		t.Errorf("a reference that rounds to 0.00 got a ratio: %v", sum.Ratios["fasthttp"])
	}
	if q, _ := m.Summary["nginx"].ratio("nginx"); !near(q, 1) {
		t.Errorf("nginx over itself = %v, want 1", q)
	}
	f := res.Figures[0]
	if got := versusCell(f, m, "dwell", "nginx"); got != "1.25× (1.00 · 1.50)" {
		t.Errorf("versus cell = %q", got)
	}
	if got := versusCell(f, m, "dwell", "fasthttp"); got != "n/a" {
		t.Errorf("versus cell without a ratio = %q, want n/a", got)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
