// Package labels is what the metrics modules (promdwell, oteldwell) share on their recording
// paths, so that both label a request alike: the method as OpenTelemetry's conventions name it,
// and the cache of what a combination of labels records into — a Prometheus series, an
// OpenTelemetry attribute set, a span name — made once and found again without a lock or an
// allocation.
package labels

import (
	"iter"
	"maps"
	"sync"
	"sync/atomic"
)

// A Cache maps keys to values made once: a lookup is a load of an immutable map, lock-free
// and without allocation, and a miss copies the map under a mutex, so that misses, rare once
// the keys seen have been seen, pay for the hits. The keys are bounded in practice — known
// methods, route patterns, the statuses a service answers — but a handler that sets statuses
// without bound must not grow a cache without bound: past Max entries, values are made for each
// use and not kept.
type Cache[K comparable, V any] struct {
	m    atomic.Pointer[map[K]V]
	mu   sync.Mutex
	make func(K) V
	max  int
}

// Max is the most entries a Cache keeps.
const Max = 4096

// New returns a Cache whose values f makes, keeping at most max of them (max <= 0: Max).
func New[K comparable, V any](f func(K) V, max int) *Cache[K, V] {
	if max <= 0 {
		max = Max
	}
	return &Cache[K, V]{make: f, max: max}
}

// Get returns the value of k, made by the cache's function the first time.
func (c *Cache[K, V]) Get(k K) V {
	if m := c.m.Load(); m != nil {
		if v, ok := (*m)[k]; ok {
			return v
		}
	}
	return c.miss(k)
}

// All returns the values the cache keeps, in no order: those made after it began may be left
// out.
func (c *Cache[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if m := c.m.Load(); m != nil {
			for k, v := range *m {
				if !yield(k, v) {
					return
				}
			}
		}
	}
}

// Len returns how many values the cache keeps.
func (c *Cache[K, V]) Len() int {
	if m := c.m.Load(); m != nil {
		return len(*m)
	}
	return 0
}

func (c *Cache[K, V]) miss(k K) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if v, ok := (*old)[k]; ok {
			return v // made meanwhile
		}
		if len(*old) >= c.max {
			return c.make(k)
		}
	}
	v := c.make(k)
	m := map[K]V{}
	if old != nil {
		m = maps.Clone(*old)
	}
	m[k] = v
	c.m.Store(&m)
	return v
}
