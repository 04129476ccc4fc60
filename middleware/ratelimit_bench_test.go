package middleware

import (
	"hash/maphash"
	"net/netip"
	"sync/atomic"
	"testing"
)

// BenchmarkRateTake is the limiter's own work on a request, the clock read and the key's hash
// included: one key for all (every goroutine on one bucket's lock, the worst case), or a key
// per goroutine among 100,000 addresses, which the table of 65,536 keeps evicting.
func BenchmarkRateTake(b *testing.B) {
	l := newRateLimiter(RateLimitOptions{Rate: 1_000_000_000})
	addr := func(i uint32) [16]byte {
		return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).As16()
	}
	take := func(a [16]byte) {
		now := max(int64(l.now().Sub(l.start)), 0)
		l.table.take(maphash.Bytes(l.seed, a[:]), now, l.interval, l.window)
	}
	b.Run("one key", func(b *testing.B) {
		a := addr(1)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				take(a)
			}
		})
	})
	b.Run("100k keys", func(b *testing.B) {
		var next atomic.Uint32
		b.RunParallel(func(pb *testing.PB) {
			i := next.Add(7919)
			for pb.Next() {
				i = (i + 1) % 100_000
				take(addr(i))
			}
		})
	})
}
