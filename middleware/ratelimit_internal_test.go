package middleware

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

const ms = int64(time.Millisecond)

// used counts the entries of t that hold a key, recovered or not.
func (t *rateTable) used() int {
	n := 0
	for i := range t.buckets {
		b := &t.buckets[i]
		b.mu.Lock()
		for _, e := range b.e {
			if e.tag != 0 {
				n++
			}
		}
		b.mu.Unlock()
	}
	return n
}

// bytes is the table's memory, which RateLimitOptions.MaxKeys's doc states.
func (t *rateTable) bytes() int { return len(t.buckets) * int(unsafe.Sizeof(rateBucket{})) }

// TestRateTableSize: the figures of MaxKeys's doc — 17 bytes a key, 1.1 MB for 65,536 — are
// the table's, which is allocated whole at the start.
func TestRateTableSize(t *testing.T) {
	if s := unsafe.Sizeof(rateBucket{}); s != 136 || rateBytesPerKey != 17 {
		t.Fatalf("a bucket is %d bytes, %d a key; the docs say 136 and 17", s, rateBytesPerKey)
	}
	for _, keys := range []int{1, 8, 9, 1000, 1 << 16, 100_000} {
		tb := newRateTable(keys)
		if n := len(tb.buckets) * rateWays; n < keys || n >= keys+rateWays {
			t.Errorf("%d keys: room for %d", keys, n)
		}
		if b := tb.bytes(); b > (keys+rateWays-1)*rateBytesPerKey {
			t.Errorf("%d keys: %d bytes, over %d a key", keys, b, rateBytesPerKey)
		}
	}
	if b := newRateTable(1 << 16).bytes(); b != 1_114_112 {
		t.Errorf("the default table is %d bytes; the docs say 1.1 MB", b)
	}
}

// TestRateGCRA: a key's requests against the clock, with Rate 4 per second and the bursts
// given: what passes, and the r and t of the RateLimit field.
func TestRateGCRA(t *testing.T) {
	type step struct {
		at   int64 // ms since the start
		ok   bool
		r, t int64
	}
	cases := []struct {
		name  string
		burst int
		steps []step
	}{
		{"a burst of Rate, then one every Period/Rate", 0, []step{
			{0, true, 3, 1}, {0, true, 2, 1}, {1, true, 1, 1}, {2, true, 0, 1},
			{3, false, 0, 1},    // the 5th within 250 ms: refused, and Retry-After 1
			{249, false, 0, 1},  // still
			{250, true, 0, 1},   // one interval later, one more
			{251, false, 0, 1},  // and no more
			{1250, true, 3, 1},  // whole again a second after the last
			{5000, true, 3, 1},  // quiet for long: no more than a burst
			{5000, true, 2, 1},  //
			{5100, true, 1, 1},  // 100 ms: none back yet
			{5250, true, 1, 1},  // 250 ms: one back
			{5250, true, 0, 1},  //
			{5250, false, 0, 1}, //
		}},
		{"a burst of 1: evenly spaced", 1, []step{
			{0, true, 0, 1}, {100, false, 0, 1}, {250, true, 0, 1}, {499, false, 0, 1}, {500, true, 0, 1},
		}},
		{"a burst over Rate", 6, []step{
			{0, true, 5, 1}, {0, true, 4, 1}, {0, true, 3, 1}, {0, true, 2, 1}, {0, true, 1, 1}, {0, true, 0, 1},
			{0, false, 0, 1}, {250, true, 0, 1},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var clock fakeClock
			l := newRateLimiter(RateLimitOptions{Rate: 4, Burst: tc.burst, Now: clock.Now})
			for i, s := range tc.steps {
				clock.Set(s.at * ms)
				ok, r, tt := l.takeAt(42)
				if ok != s.ok || r != s.r || tt != s.t {
					t.Fatalf("step %d at %d ms: ok %v r=%d t=%d, want %v r=%d t=%d", i, s.at, ok, r, tt, s.ok, s.r, s.t)
				}
			}
		})
	}
}

// TestRateWaitSeconds: t (and Retry-After) is the whole seconds until one more request, with
// a rate slower than one a second: 3 a minute.
func TestRateWaitSeconds(t *testing.T) {
	var clock fakeClock
	l := newRateLimiter(RateLimitOptions{Rate: 3, Period: time.Minute, Now: clock.Now})
	for _, s := range []struct {
		at   int64
		ok   bool
		r, t int64
	}{
		{0, true, 2, 20}, {0, true, 1, 20}, {1000, true, 0, 19}, {1000, false, 0, 19},
		{19_500, false, 0, 1}, {20_000, true, 0, 20}, {25_000, false, 0, 15},
		{20_000 + 60_000, true, 2, 20}, // a minute after the last: whole again
	} {
		clock.Set(s.at * ms)
		if ok, r, tt := l.takeAt(7); ok != s.ok || r != s.r || tt != s.t {
			t.Fatalf("at %d ms: ok %v r=%d t=%d, want %v r=%d t=%d", s.at, ok, r, tt, s.ok, s.r, s.t)
		}
	}
}

// TestRatePolicyField: q per w, whole seconds.
func TestRatePolicyField(t *testing.T) {
	for _, tc := range []struct {
		rate   int
		period time.Duration
		want   string
	}{
		{10, time.Second, `"p";q=10;w=1`},
		{100, time.Minute, `"p";q=100;w=60`},
		{5, 500 * time.Millisecond, `"p";q=10;w=1`},
		{2, 1500 * time.Millisecond, `"p";q=2;w=2`},
		{1, 24 * time.Hour, `"p";q=1;w=86400`},
	} {
		if got := policyField("p", tc.rate, tc.period); got != tc.want {
			t.Errorf("%d per %v: %s, want %s", tc.rate, tc.period, got, tc.want)
		}
	}
}

// TestRateTableBound: 100,000 keys, ten times the table's room, leave it at its size, and a
// key held at its limit stays refused through the flood, since the keys of the flood are
// never further in debt than it is.
func TestRateTableBound(t *testing.T) {
	var clock fakeClock
	const maxKeys = 10_000
	l := newRateLimiter(RateLimitOptions{Rate: 10, MaxKeys: maxKeys, Now: clock.Now})
	buckets := len(l.table.buckets)
	const hot = 0xdeadbeef_00000000
	for range 10 {
		if ok, _, _ := l.takeAt(hot); !ok {
			t.Fatal("the burst was refused")
		}
	}
	for k := range uint64(100_000) {
		clock.Set(int64(k) * 500) // 50 ms over the flood: the hot key gets none back meanwhile
		l.takeAt(k * 0x9e3779b97f4a7c15)
		if k%10_000 == 0 {
			if ok, _, _ := l.takeAt(hot); ok {
				t.Fatalf("after %d new keys, the key at its limit passed", k)
			}
		}
	}
	if n := l.table.used(); n > maxKeys || len(l.table.buckets) != buckets {
		t.Fatalf("%d keys held in %d buckets, bound %d in %d", n, len(l.table.buckets), maxKeys, buckets)
	}
	if ok, _, _ := l.takeAt(hot); ok {
		t.Fatal("the key at its limit passed after the flood")
	}
}

// TestRateEviction: a key new to a bucket whose keys are all in debt takes the entry of the
// one closest to recovering, which then starts afresh; one whose keys have recovered takes a
// recovered entry, and the others keep their debt.
func TestRateEviction(t *testing.T) {
	var clock fakeClock
	l := newRateLimiter(RateLimitOptions{Rate: 10, MaxKeys: rateWays, Now: clock.Now}) // one bucket
	// Key i spends 1+i of its 10: key 0 is the least in debt.
	for i := range uint64(rateWays) {
		for range 1 + i {
			l.takeAt(i<<1 | 1)
		}
	}
	if ok, _, _ := l.takeAt(100 << 1); !ok {
		t.Fatal("a new key was refused")
	}
	if _, r, _ := l.takeAt(0<<1 | 1); r != 9 {
		t.Errorf("key 0 has r=%d: it should have been forgotten and start afresh (r=9 after this request)", r)
	}
	if _, r, _ := l.takeAt(7<<1 | 1); r != 1 {
		t.Errorf("key 7 has r=%d, want 1: it was the most in debt and kept its state", r)
	}
	// A second later every key has recovered, and is as good as new.
	clock.Set(1000 * ms)
	for i := range uint64(rateWays) {
		if _, r, _ := l.takeAt(i<<1 | 1); r != 9 {
			t.Errorf("a second later, key %d has r=%d, want 9", i, r)
		}
	}
}

// TestRateConcurrent: goroutines that share keys across the loops' goroutines, under -race:
// with the clock stopped, exactly Burst requests of each key pass, whoever makes them.
func TestRateConcurrent(t *testing.T) {
	var clock fakeClock
	const burst, keys, workers = 50, 16, 8
	l := newRateLimiter(RateLimitOptions{Rate: burst, Now: clock.Now})
	var passed [keys]atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range 2 * burst * keys {
				k := (i + w) % keys
				if ok, _, _ := l.takeAt(uint64(k) * 0x9e3779b97f4a7c15); ok {
					passed[k].Add(1)
				}
			}
		})
	}
	wg.Wait()
	for k := range passed {
		if n := passed[k].Load(); n != burst {
			t.Errorf("key %d: %d passed, want %d", k, n, burst)
		}
	}
}

// takeAt is serve's arithmetic for the key hashed h: whether it passes, r and t.
func (l *rateLimiter) takeAt(h uint64) (ok bool, r, t int64) {
	now := max(int64(l.now().Sub(l.start)), 0)
	debt, ok := l.table.take(h, now, l.interval, l.window)
	r, t = l.remaining(debt)
	return ok, r, t
}

// fakeClock is a clock the test sets, in nanoseconds after an arbitrary start.
type fakeClock struct{ ns atomic.Int64 }

var clockStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func (c *fakeClock) Now() time.Time { return clockStart.Add(time.Duration(c.ns.Load())) }
func (c *fakeClock) Set(ns int64)   { c.ns.Store(ns) }
