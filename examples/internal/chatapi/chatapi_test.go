package chatapi

import (
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestPollTimeout: a poll's timeout is capped at MaxTimeout however large the number sent —
// one that would overflow when made a duration included, which would be no deadline at all.
func TestPollTimeout(t *testing.T) {
	h := func(c *core.Ctx) {
		if _, timeout, ok := PollArgs(c); ok {
			c.WriteString(strconv.FormatInt(int64(timeout), 10))
		}
	}
	for q, want := range map[string]time.Duration{
		"":                              DefaultTimeout,
		"?timeout=1500":                 1500 * time.Millisecond,
		"?timeout=999999999":            MaxTimeout,
		"?timeout=9223372036855":        MaxTimeout,
		"?timeout=18446744073709551615": MaxTimeout,
	} {
		r, _ := http.NewRequest("GET", "http://h/messages"+q, nil)
		resp := coretest.Do(t, h, r)
		b, _ := io.ReadAll(resp.Body)
		if got := string(b); got != strconv.FormatInt(int64(want), 10) {
			t.Errorf("%q: timeout %s, want %v", q, got, want)
		}
	}
}
