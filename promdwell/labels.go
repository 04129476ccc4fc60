package promdwell

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// series is what one combination of labels records into.
type series struct {
	duration, requestSize, responseSize prometheus.Observer
}

// seriesKey names a combination of labels.
type seriesKey struct {
	method, route, scheme string
	status                int
}

// seriesCache maps labels to their series without a lock or an allocation on a hit: readers
// load an immutable map; a miss copies it with the new entry under mu. The set of keys is
// bounded (methods, routes, statuses, schemes), so copying on each new one costs little.
type seriesCache struct {
	m   atomic.Pointer[map[seriesKey]*series]
	mu  sync.Mutex
	new func(seriesKey) *series
}

func (c *seriesCache) get(k seriesKey) *series {
	if m := c.m.Load(); m != nil {
		if s, ok := (*m)[k]; ok {
			return s
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if s, ok := (*old)[k]; ok {
			return s
		}
	}
	next := make(map[seriesKey]*series, 1+lenOf(old))
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	s := c.new(k)
	next[k] = s
	c.m.Store(&next)
	return s
}

func lenOf(m *map[seriesKey]*series) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

// statusText returns a status code's decimal form without allocating for the codes HTTP
// uses.
func statusText(code int) string {
	if code >= 0 && code < len(statusTexts) {
		return statusTexts[code]
	}
	return strconv.Itoa(code)
}

var statusTexts = func() (t [600]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return
}()

// knownMethods are the methods counted under their own name (RFC 9110 and PATCH); any other
// is "_OTHER".
var knownMethods = [...]string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE"}

func methodLabel(m string) string {
	for _, k := range knownMethods {
		if m == k {
			return k
		}
	}
	return "_OTHER"
}
