//go:build !race

package middleware

import "testing"

// TestRateTableAllocs: a key new to the table costs no allocation either, so no number of keys
// makes the table grow: it takes an entry of the table allocated at the start.
func TestRateTableAllocs(t *testing.T) {
	var clock fakeClock
	l := newRateLimiter(RateLimitOptions{Rate: 10, MaxKeys: 1000, Now: clock.Now})
	var h uint64
	got := testing.AllocsPerRun(100_000, func() {
		h += 0x9e3779b97f4a7c15
		l.takeAt(h)
	})
	if got != 0 {
		t.Fatalf("%.2f allocations per new key, want 0", got)
	}
}
