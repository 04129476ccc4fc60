package main

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
)

// A tally counts what happened to the requests: those that succeeded, those that failed by the
// client's own doing or, once a shutdown has begun, as a shutdown makes them (expected), and the
// failures, by what they said.
type tally struct {
	shutdown func() bool // reports whether the server's shutdown has begun
	ok       atomic.Int64
	mu       sync.Mutex
	expected map[string]int
	failed   map[string]int
}

func newTally(shutdown func() bool) *tally {
	return &tally{shutdown: shutdown, expected: map[string]int{}, failed: map[string]int{}}
}

// ports are the ephemeral ports in an error's addresses, which would make every error unique.
var ports = regexp.MustCompile(`:\d{4,5}->`)

func (t *tally) expect(what string) {
	t.mu.Lock()
	t.expected[what]++
	t.mu.Unlock()
}

func (t *tally) fail(what string, err error) {
	if why, ok := expected(err); ok && t.shutdown() {
		t.expect(why)
		return
	}
	msg := ports.ReplaceAllString(fmt.Sprintf("%s: %v", what, err), ":P->")
	if t.shutdown() {
		msg = "during the shutdown: " + msg // the phase, which tells a shutdown's race from a failure under load
	}
	if len(msg) > 200 {
		msg = msg[:200]
	}
	t.mu.Lock()
	t.failed[msg]++
	t.mu.Unlock()
}

// failures returns how many requests failed.
func (t *tally) failures() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, v := range t.failed {
		n += v
	}
	return n
}

func (t *tally) print(title string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Printf("%s: %d succeeded", title, t.ok.Load())
	for _, k := range slices.Sorted(maps.Keys(t.expected)) {
		fmt.Printf(", %d %s", t.expected[k], k)
	}
	n := 0
	for _, v := range t.failed {
		n += v
	}
	fmt.Printf("; %d FAILED\n", n)
	for _, k := range slices.Sorted(maps.Keys(t.failed)) {
		fmt.Printf("  %6d  %s\n", t.failed[k], k)
	}
}

// merge adds what u counted to t.
func (t *tally) merge(u *tally) {
	t.ok.Add(u.ok.Load())
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, v := range u.expected {
		t.expected[k] += v
	}
	for k, v := range u.failed {
		t.failed[k] += v
	}
}
