package engine

import (
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// TestClock: Tick formats Date for the turn's second; Read moves Now forward and never back;
// Wall agrees with the turn's reading; Time turns a reading back into a time.
func TestClock(t *testing.T) {
	c := NewClock()
	d, err := time.Parse(http.TimeFormat, string(c.Date[:]))
	if err != nil {
		t.Fatalf("Date %q: %v", c.Date[:], err)
	}
	if d.Unix() != c.turn.Unix() {
		t.Errorf("Date says %v, the turn was at %v", d, c.turn.UTC())
	}
	before := c.Now
	if got := c.Read(); got < before || c.Now != got {
		t.Errorf("Read %d after %d (Now %d)", got, before, c.Now)
	}
	if c.TurnNow() != before {
		t.Errorf("Read moved the turn's reading: %d, was %d", c.TurnNow(), before)
	}
	wall, mono := c.Wall()
	if mono < c.TurnNow() || !wall.Equal(c.Time(mono)) {
		t.Errorf("Wall %v at %d, the turn at %d, Time(%d) %v", wall, mono, c.TurnNow(), mono, c.Time(mono))
	}
	if got := c.Time(5e9).Sub(c.Time(0)); got != 5*time.Second {
		t.Errorf("Time(5e9) - Time(0) = %v", got)
	}
	if c.Elapsed() < c.Now {
		t.Errorf("Elapsed %d behind Now %d", c.Elapsed(), c.Now)
	}
}

// A turnDriver records what a Loop's turns ask of it, each call with its turn's number.
type turnDriver struct {
	l      *Loop
	ib     *Inbox[int]
	conn   int // the connection accepted, registered with tag 7
	timer  Timer
	calls  []string
	posted []int
	input  []byte
	busy   int // turns still to report work for
}

func (d *turnDriver) note(what string) {
	d.calls = append(d.calls, strconv.FormatInt(d.l.Counts.Turns, 10)+":"+what)
}

func (d *turnDriver) Event(ev *netpoll.Event) {
	d.note("event " + strconv.Itoa(int(ev.Tag())))
	if ev.FD() != d.conn || ev.Tag() != 7 {
		panic("an event for another descriptor")
	}
	var b [16]byte
	n, _ := netpoll.Read(d.conn, b[:])
	d.input = append(d.input, b[:max(n, 0)]...)
}

func (d *turnDriver) Posted() {
	d.note("posted")
	q := d.ib.Take()
	d.posted = append(d.posted, q...)
	d.ib.Recycle(q)
}

func (d *turnDriver) Accept(ln int) {
	d.note("accept " + strconv.Itoa(ln))
	d.l.Acc.Accept(ln, d)
}

func (d *turnDriver) Full() bool { return d.conn >= 0 }

func (d *turnDriver) Open(fd, ln int) {
	d.conn = fd
	if err := d.l.Poll.Add(fd, 7, netpoll.WatchRead); err != nil {
		panic(err)
	}
}

func (d *turnDriver) Due(t *Timer) {
	if t != &d.timer {
		panic("another timer")
	}
	d.note("due")
}

func (d *turnDriver) Turn()  { d.note("turn") }
func (d *turnDriver) Flush() { d.note("flush") }

func (d *turnDriver) Busy() bool {
	d.busy--
	return d.busy >= 0
}

func (d *turnDriver) Finished() bool { return len(d.input) == 5 && len(d.posted) == 2 }

// TestLoopRun: a turn hands the driver, in this order, the events of its connections, the
// wake-up of posted tasks and its listeners' new connections (in the poll's order), then the
// timers due, then its own turn and the flush; it counts its turns and stops once the driver is
// finished. A posted task, a listener's connection, a connection's input and a timer armed for
// now, all ready before the loop runs, are each seen once.
func TestLoopRun(t *testing.T) {
	lfd, addr, p := listenAndPoll(t)
	ib, err := NewInbox[int]()
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Close()
	if err := p.Add(ib.FD(), 0, netpoll.WatchRead); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	l := &Loop{Log: log, Poll: p, Wakeup: ib.FD(), Acc: NewAcceptor([]Listener{{FD: lfd}}, p, log, 0),
		Timers: NewHeap(4), Clk: NewClock()}
	defer l.Acc.Close(nil)
	if err := l.Acc.Listen(); err != nil {
		t.Fatal(err)
	}
	d := &turnDriver{l: l, ib: ib, conn: -1, busy: 1}
	d.timer.Init(1)
	l.Timers.Set(&d.timer, l.Clk.Now)
	ib.Post(1)
	ib.Post(2)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}

	if got := l.pollTimeout(d); got != 0 {
		t.Errorf("a busy driver's poll waits %d ms", got)
	}
	l.Run(d)
	defer netpoll.Close(d.conn)

	if string(d.input) != "hello" || !slices.Equal(d.posted, []int{1, 2}) {
		t.Fatalf("read %q, posted %v", d.input, d.posted)
	}
	// Each turn: its events (any order among them), then due, turn, flush, in that order.
	turns := map[string][]string{}
	var order []string
	for _, call := range d.calls {
		n, what, _ := strings.Cut(call, ":")
		if len(turns[n]) == 0 {
			order = append(order, n)
		}
		turns[n] = append(turns[n], what)
	}
	seen := map[string]int{}
	for _, n := range order {
		calls := turns[n]
		k := len(calls)
		if k < 2 || calls[k-2] != "turn" || calls[k-1] != "flush" {
			t.Fatalf("turn %s: %v does not end with its turn and the flush", n, calls)
		}
		for i, what := range calls[:k-2] {
			seen[what]++
			if what == "due" && i != k-3 {
				t.Errorf("turn %s: %v: the timer ran before the events", n, calls)
			}
		}
	}
	want := map[string]int{"posted": 1, "accept 0": 1, "event 7": 1, "due": 1}
	if !maps.Equal(seen, want) {
		t.Errorf("calls %v, want each of %v once", d.calls, want)
	}
	if int(l.Counts.Turns) != len(order) && countStats {
		t.Errorf("counted %d turns, the driver saw %d", l.Counts.Turns, len(order))
	}
	if _, armed := l.Timers.Next(); armed {
		t.Error("the timer is still armed")
	}
}

// TestPollTimeout: with nothing to do the poll waits for the next timer, rounded up to the
// millisecond, or for ever without one; a timer due, or a busy driver, makes it not wait.
func TestPollTimeout(t *testing.T) {
	l := &Loop{Timers: NewHeap(2), Clk: NewClock()}
	idle := &turnDriver{l: l}
	if got := l.pollTimeout(idle); got != -1 {
		t.Errorf("no timer: wait %d, want -1", got)
	}
	var tm Timer
	tm.Init(1)
	l.Timers.Set(&tm, l.Clk.Now+int64(1500*time.Microsecond))
	if got := l.pollTimeout(idle); got != 2 {
		t.Errorf("a timer 1.5 ms away: wait %d ms, want 2", got)
	}
	if got := l.pollTimeout(&turnDriver{l: l, busy: 1}); got != 0 {
		t.Errorf("busy: wait %d, want 0", got)
	}
	l.Timers.Set(&tm, l.Clk.Now)
	if got := l.pollTimeout(idle); got != 0 {
		t.Errorf("a timer due: wait %d, want 0", got)
	}
}
