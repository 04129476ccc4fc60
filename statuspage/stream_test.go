package statuspage_test

import (
	"context"
	"errors"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/statuspage"
)

// TestStream checks the event stream: its fields, successive snapshots with rates that see
// the requests made meanwhile, and its end when the client leaves.
func TestStream(t *testing.T) {
	st := serve(t, 2, statuspage.Options{Interval: 100 * time.Millisecond})
	c, resp, events := st.openStream(t, "text/event-stream", "/status")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" ||
		len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("%d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), resp.TransferEncoding)
	}
	checkCommonHeaders(t, resp.Header)

	first := events.snapshot()
	if first.Total.Rates != nil || first.Total.Conns.Working != 1 || len(first.Loops) != 2 {
		t.Errorf("first event: rates %v, working %d, %d loops", first.Total.Rates, first.Total.Conns.Working, len(first.Loops))
	}

	// Requests made now show in a later event, and in its rates.
	other := coretest.Dial(t, st.addr)
	hello(t, other, 5)
	prev := first
	for n := 1; ; n++ {
		sn := events.snapshot()
		if !sn.Time.After(prev.Time) {
			t.Errorf("event %d at %v, the one before at %v", n, sn.Time, prev.Time)
		}
		r := sn.Total.Rates
		if r == nil || r.Seconds <= 0 || r.RequestsPerSecond < 0 {
			t.Fatalf("event %d: rates %+v", n, r)
		}
		if got := float64(sn.Total.Requests-prev.Total.Requests) / r.Seconds; got != r.RequestsPerSecond {
			t.Errorf("event %d: %v requests/s, the counts say %v", n, r.RequestsPerSecond, got)
		}
		for _, l := range sn.Loops {
			if l.Rates == nil && !l.Stale {
				t.Errorf("event %d: loop %d has no rates", n, l.Loop)
			}
		}
		if sn.Total.Requests >= first.Total.Requests+5 {
			if sn.Total.Conns.Open < 2 || sn.Total.Conns.Idle < 1 {
				t.Errorf("event %d: connections %+v, want the stream's and an idle one", n, sn.Total.Conns)
			}
			break
		}
		prev = sn
	}

	// The client leaves: the handler ends at once (it was parked between events), and its
	// connection closes.
	c.Close()
	d := coretest.Receive(t, "the stream's end", st.done)
	if d.Status != 200 || d.Bytes == 0 {
		t.Errorf("the stream ended with %+v", d)
	}
	coretest.WaitFor(t, "the stream's connection closed", func() bool { return st.s.Stats().Total.Conns.Open == 1 })
}

// TestStreamShutdown checks that a stream ends as soon as a shutdown begins, whole (its last
// chunk sent), so that the shutdown does not wait for an open page.
func TestStreamShutdown(t *testing.T) {
	st := serve(t, 1, statuspage.Options{Interval: time.Hour}) // parked for the whole test
	_, _, events := st.openStream(t, "text/event-stream", "/status?format=sse")
	events.snapshot()
	shut := make(chan error, 1)
	go func() { shut <- st.s.Shutdown(context.Background()) }()
	if rest, err := io.ReadAll(events.r); err != nil || len(rest) != 0 {
		t.Errorf("after the shutdown the stream had %q more, and %v", rest, err)
	}
	if err := coretest.Receive(t, "the shutdown", shut); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	d := coretest.Receive(t, "the stream's end", st.done)
	if d.Err != nil && !errors.Is(d.Err, core.ErrShutdown) {
		t.Errorf("the stream ended with %+v", d)
	}
}

// TestStreamPace checks that events come an interval apart, on a server of one loop too, where
// every Stats call from the handler has its answers before it parks (and so leaves a wake-up
// for the handler's next park, which the stream must sleep through).
func TestStreamPace(t *testing.T) {
	for _, loops := range []int{1, 2} {
		t.Run(strconv.Itoa(loops)+" loops", func(t *testing.T) {
			const interval = 100 * time.Millisecond
			st := serve(t, loops, statuspage.Options{Interval: interval})
			_, _, events := st.openStream(t, "text/event-stream", "/status")
			prev := events.snapshot()
			for range 3 {
				sn := events.snapshot()
				if gap := sn.Time.Sub(prev.Time); gap < interval/2 {
					t.Errorf("events %v apart, the interval is %v", gap, interval)
				}
				prev = sn
			}
		})
	}
}
