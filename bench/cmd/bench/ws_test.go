package main

import (
	"slices"
	"strings"
	"testing"
)

// TestBestPeer checks that a WebSocket metric's ratios go to the peer with the best median, in
// the metric's direction, and that contenders that are not peers (dwell, the floor) are never
// chosen, however good their medians.
func TestBestPeer(t *testing.T) {
	lower := &Metric{ID: "cpu_us", Digits: 2, Better: "lower"}
	higher := &Metric{ID: "mps", Digits: 0, Better: "higher"}
	for round, v := range map[int][3]float64{1: {10, 8, 4}, 2: {12, 9, 5}, 3: {11, 20, 6}} {
		for _, m := range []*Metric{lower, higher} {
			m.add("gorilla", round, v[0])
			m.add("gws", round, v[1])
			m.add("dwell", round, v[2])
		}
		lower.add("floor", round, 1)
		higher.add("floor", round, 100)
	}
	res := &Results{Figures: []*Figure{{ID: "ws-echo", Metrics: []*Metric{lower, higher},
		Servers: []string{"dwell", "gorilla", "gws", "floor"}, Peers: []string{"gorilla", "gws"}}}}
	res.summarize()
	if lower.Best != "gws" || higher.Best != "gorilla" {
		t.Fatalf("best peers %q (lower), %q (higher); want gws, gorilla", lower.Best, higher.Best)
	}
	// dwell over gws, round by round: 4/8, 5/9, 6/20; the median is 0.5.
	if q, ok := lower.Summary["dwell"].ratio("gws"); !ok || !near(q, 0.5) {
		t.Errorf("dwell over gws = %v, %v", q, ok)
	}
	if _, ok := lower.Summary["dwell"].ratio(baseline); ok {
		t.Error("a WebSocket metric got a ratio to net/http")
	}
	if got := cellBest(res.Figures[0], lower, "dwell"); got != "5.00 (0.50×)" {
		t.Errorf("summary cell %q", got)
	}
	// The floor over gws: 1/8, 1/9, 1/20.
	if got := cellBest(res.Figures[0], lower, "floor"); got != "1.00 (0.11×)" {
		t.Errorf("the floor's summary cell %q", got)
	}
}

// TestFloor checks that the WebSocket floor is a contender but no peer, and that it takes part
// in every figure but the permessage-deflate ones, which it does not speak.
func TestFloor(t *testing.T) {
	if slices.Contains(wsPeers, "floor") {
		t.Fatal("the floor is one of the peers the best peer is chosen among")
	}
	i := slices.IndexFunc(wsContenders, func(c wsContender) bool { return c.name == "floor" })
	if i < 0 {
		t.Fatal("no floor among the WebSocket contenders")
	}
	for _, id := range wsFigureIDs() {
		if want, got := !strings.Contains(id, "deflate"), slices.Contains(wsContenders[i].figures, id); got != want {
			t.Errorf("the floor takes part in %s: %v, want %v", id, got, want)
		}
	}
}
