package wait

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// pollHandler answers GET /?after=N&ms=T with "last:m1,m2,...;err" from Topic.Next, or, for
// the path /k, from OnNext.
func pollHandler(tp *Topic[string]) core.Handler {
	return func(c *core.Ctx) {
		after, _ := strconv.ParseUint(c.Query("after"), 10, 64)
		ms, _ := strconv.Atoi(c.Query("ms"))
		if c.Path() == "/k" {
			tp.OnNext(c, after, time.Duration(ms)*time.Millisecond, replyStrings)
			return
		}
		msgs, last, err := tp.Next(c, after, time.Duration(ms)*time.Millisecond)
		replyStrings(c, msgs, last, err)
	}
}

func replyStrings(c *core.Ctx, msgs []string, last uint64, err error) {
	fmt.Fprintf(c, "%d:%s;%s", last, strings.Join(msgs, ","), errString(err))
}

func TestTopicNext(t *testing.T) {
	for _, path := range []string{"/", "/k"} {
		t.Run(path, func(t *testing.T) {
			tp := NewTopic[string](16)
			_, addr := coretest.Serve(t, pollHandler(tp), core.Options{Loops: 1})
			tp.Publish("a")
			tp.Publish("b")
			if got := roundTrip(t, addr, path+"?after=0&ms=1000"); got != "2:a,b;nil" {
				t.Fatal(got)
			}
			if got := roundTrip(t, addr, path+"?after=1&ms=1000"); got != "2:b;nil" {
				t.Fatal(got)
			}
			c := dial(t, addr)
			c.get(path + "?after=2&ms=60000")
			coretest.WaitFor(t, "parked", func() bool { return tp.h.waiting() == 1 })
			go tp.Publish("c")
			if _, got := c.response(); got != "3:c;nil" {
				t.Fatal(got)
			}
			start := time.Now()
			if got := roundTrip(t, addr, path+"?after=3&ms=80"); got != "3:;"+ErrTimeout.Error() {
				t.Fatal(got)
			}
			if d := time.Since(start); d < 75*time.Millisecond {
				t.Fatalf("timed out after %v", d)
			}
			coretest.WaitFor(t, "waiters unlinked", tp.h.idle)
		})
	}
}

func TestTopicHistoryOverflow(t *testing.T) {
	tp := NewTopic[string](4)
	_, addr := coretest.Serve(t, pollHandler(tp), core.Options{Loops: 1})
	for i := 1; i <= 10; i++ {
		if seq := tp.Publish(strconv.Itoa(i)); seq != uint64(i) {
			t.Fatalf("Publish returned %d, want %d", seq, i)
		}
	}
	for _, tc := range []struct{ target, want string }{
		{"/?after=2", "10:7,8,9,10;" + ErrMissed.Error()},
		{"/k?after=0", "10:7,8,9,10;" + ErrMissed.Error()},
		{"/?after=5", "10:7,8,9,10;" + ErrMissed.Error()},
		{"/?after=6", "10:7,8,9,10;nil"},
		{"/k?after=9", "10:10;nil"},
	} {
		if got := roundTrip(t, addr, tc.target+"&ms=1000"); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.target, got, tc.want)
		}
	}
}

// TestTopicCursorAhead: a cursor from the future waits for the next message and gets the
// topic's own cursor back, with the message or on a timeout.
func TestTopicCursorAhead(t *testing.T) {
	tp := NewTopic[string](4)
	tp.Publish("x")
	_, addr := coretest.Serve(t, pollHandler(tp), core.Options{Loops: 1})
	c := dial(t, addr)
	c.get("/?after=999&ms=60000")
	coretest.WaitFor(t, "parked", func() bool { return tp.h.waiting() == 1 })
	tp.Publish("y")
	if _, got := c.response(); got != "2:y;nil" {
		t.Fatal(got)
	}
	if got := roundTrip(t, addr, "/?after=999&ms=50"); got != "2:;"+ErrTimeout.Error() {
		t.Fatal(got)
	}
}

// TestTopicFollowersMissNothing: followers on four loops each follow the topic with their
// cursor while several goroutines publish; within the history, every follower sees every
// message exactly once, in order. Run it with -race.
func TestTopicFollowersMissNothing(t *testing.T) {
	const publishers, each, followers = 4, 50, 24
	total := publishers * each
	tp := NewTopic[int](total)
	_, addr := coretest.Serve(t, pollHandler2(tp), core.Options{Loops: 4})
	var pubMu sync.Mutex
	published := make(map[int]int) // seq -> value
	var wg sync.WaitGroup
	results := make([][2][]int, followers) // seqs and values seen
	for f := range followers {
		wg.Go(func() {
			c := dial(t, addr)
			path := "/"
			if f%2 == 1 {
				path = "/k"
			}
			var after uint64
			for len(results[f][0]) < total {
				c.get(fmt.Sprintf("%s?after=%d", path, after))
				_, body := c.response()
				last, vals, ok := parseValues(body)
				if !ok {
					t.Errorf("follower %d: %q", f, body)
					return
				}
				for i, v := range vals {
					results[f][0] = append(results[f][0], int(last)-(len(vals)-1-i))
					results[f][1] = append(results[f][1], v)
				}
				after = last
			}
		})
	}
	// Every follower waits before the first publish, so that the messages find them parked.
	coretest.WaitFor(t, "every follower parked", func() bool { return tp.h.waiting() == followers })
	var pwg sync.WaitGroup
	for p := range publishers {
		pwg.Go(func() {
			for i := range each {
				seq := tp.Publish(p*each + i)
				pubMu.Lock()
				published[int(seq)] = p*each + i
				pubMu.Unlock()
				if i%10 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	pwg.Wait()
	wg.Wait()
	for f, r := range results {
		for i, s := range r[0] {
			if s != i+1 || r[1][i] != published[s] {
				t.Fatalf("follower %d: message %d has seq %d value %d; published %d", f, i, s, r[1][i], published[s])
			}
		}
	}
	coretest.WaitFor(t, "waiters unlinked", tp.h.idle)
}

// pollHandler2 is pollHandler for an int topic, answering "last:v1,v2,...;err".
func pollHandler2(tp *Topic[int]) core.Handler {
	return func(c *core.Ctx) {
		after, _ := strconv.ParseUint(c.Query("after"), 10, 64)
		reply := func(c *core.Ctx, msgs []int, last uint64, err error) {
			var b strings.Builder
			fmt.Fprintf(&b, "%d:", last)
			for i := range msgs {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprint(&b, msgs[i])
			}
			fmt.Fprintf(&b, ";%s", errString(err))
			c.WriteString(b.String())
		}
		// A wait that times out fails the test: it must be one that only a hang reaches.
		if c.Path() == "/k" {
			tp.OnNext(c, after, time.Minute, reply)
			return
		}
		msgs, last, err := tp.Next(c, after, time.Minute)
		reply(c, msgs, last, err)
	}
}

func parseValues(body string) (uint64, []int, bool) {
	head, errPart, ok := strings.Cut(body, ";")
	if !ok || errPart != "nil" {
		return 0, nil, false
	}
	lastS, list, _ := strings.Cut(head, ":")
	last, err := strconv.ParseUint(lastS, 10, 64)
	if err != nil {
		return 0, nil, false
	}
	var seqs []int
	for s := range strings.SplitSeq(list, ",") {
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, nil, false
		}
		seqs = append(seqs, n)
	}
	return last, seqs, true
}

func TestOnNextClientLeaves(t *testing.T) {
	tp := NewTopic[string](4)
	got := make(chan error, 1)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		tp.OnNext(c, 0, time.Minute, func(_ *core.Ctx, _ []string, _ uint64, err error) { got <- err })
	}, core.Options{Loops: 1})
	c := dial(t, addr)
	c.get("/")
	coretest.WaitFor(t, "parked", func() bool { return tp.h.waiting() == 1 })
	c.Close()
	if err := coretest.Receive(t, "the continuation to run on the disconnect", got); err != ErrClosed {
		t.Fatalf("continuation got %v", err)
	}
	coretest.WaitFor(t, "waiters unlinked", tp.h.idle)
}

// TestTopicSince reads without waiting, from any goroutine.
func TestTopicSince(t *testing.T) {
	tp := NewTopic[string](2)
	if msgs, last, err := tp.Since(0); msgs != nil || last != 0 || err != nil {
		t.Fatalf("empty topic: %v %d %v", msgs, last, err)
	}
	for _, s := range []string{"a", "b", "c"} {
		tp.Publish(s)
	}
	for _, tc := range []struct {
		after uint64
		want  string
		last  uint64
		err   error
	}{
		{0, "b,c", 3, ErrMissed},
		{1, "b,c", 3, nil},
		{2, "c", 3, nil},
		{3, "", 3, nil},
		{9, "", 3, nil},
	} {
		msgs, last, err := tp.Since(tc.after)
		if strings.Join(msgs, ",") != tc.want || last != tc.last || err != tc.err {
			t.Errorf("Since(%d) = %v %d %v, want %s %d %v", tc.after, msgs, last, err, tc.want, tc.last, tc.err)
		}
	}
}

// TestPublishFunc: messages built knowing their numbers, by publishers racing each other, carry
// the numbers they are kept under.
func TestPublishFunc(t *testing.T) {
	type msg struct {
		seq uint64
		by  int
	}
	topic := NewTopic[msg](1000)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				n := topic.PublishFunc(func(seq uint64) msg { return msg{seq, g} })
				if n == 0 {
					t.Error("PublishFunc returned 0")
				}
			}
		}()
	}
	wg.Wait()
	msgs, last, err := topic.Since(0)
	if err != nil || last != 800 || len(msgs) != 800 {
		t.Fatalf("%d messages, last %d, %v", len(msgs), last, err)
	}
	for i, m := range msgs {
		if m.seq != uint64(i+1) {
			t.Fatalf("message %d carries seq %d", i+1, m.seq)
		}
	}
	// A make that panics publishes nothing, and leaves the topic usable.
	func() {
		defer func() {
			if r := recover(); r != "encoding failed" {
				t.Errorf("recovered %v, want make's panic", r)
			}
		}()
		topic.PublishFunc(func(seq uint64) msg { panic("encoding failed") })
	}()
	if n := topic.PublishFunc(func(seq uint64) msg { return msg{seq, -1} }); n != 801 || topic.Last() != 801 {
		t.Fatalf("after a panic in make: published as %d, Last %d; want 801", n, topic.Last())
	}
}
