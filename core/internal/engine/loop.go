package engine

import (
	"log/slog"
	"time"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// A Loop is the engine's half of an event loop: the poller, and what the loop keeps for its
// connections' bytes and deadlines — its clock, the timer heap, the shared read buffer, the
// output chunks' pool, the spill buffers, the transports, the accepting — with the turn that
// drives them (Run). It knows no protocol: what an event, a posted task or a due timer means is
// the Driver's, the server built on it.
type Loop struct {
	ID  int          // the loop's number, for the log
	Log *slog.Logger // where the loop reports a failed poll or a stall

	Poll   *netpoll.Poller
	Wakeup int // the descriptor of the inbox's wake-up, which the poller watches (Inbox.FD)
	Acc    Acceptor
	Plain  *Plain // the transport of the connections whose bytes are the socket's
	TLS    *TLS   // the transport of the connections that speak TLS, or nil

	Clk    Clock // read each turn, and when a timer is armed
	Timers Heap
	SW     StallWatch // what the stall watchdog reads of the loop's turns (stallwatch.go)
	Counts Counts     // what the loop's transports carried, and its turns

	Buf    []byte          // the read buffer shared by all connections, one turn at a time
	IOV    *netpoll.IOVecs // the vectors of a gathered write
	Pool   OutPool         // the loop's buffers: spills, output chunks
	Spills Spills          // the spill buffers of connections
}

// A Driver is what a Loop's turns serve: the connections above the engine, and what else their
// server keeps on the loop. Run calls it on the loop's goroutine alone.
type Driver interface {
	// Event handles the readiness of a connection: a descriptor registered with a nonzero
	// tag (the loop's own descriptors, the wake-up and the listeners, are registered with 0).
	Event(ev *netpoll.Event)
	// Posted runs what other goroutines posted to the loop (its inbox, whose wake-up fired).
	Posted()
	// Accept takes the connections waiting on the listener Acc.Lns[ln].
	Accept(ln int)
	// Due runs the owner of a timer that came due.
	Due(t *Timer)
	// Turn does the driver's own work of the turn, after the events and the due timers.
	Turn()
	// Flush writes what the driver queued outside its connections' own turns: after Turn,
	// once more after the TLS handshakes the turn ran.
	Flush()
	// Busy reports whether the driver has work for the next turn, which then polls without
	// waiting.
	Busy() bool
	// Finished reports, at the end of a turn, whether the loop is done.
	Finished() bool
}

// Run is the loop's goroutine. Each turn polls, then handles what the poll reported in its
// order — readiness of connections and listeners, and the wake-up of posted tasks, among the
// readiness — then input TLS already holds, due timers, the driver's turn, and handshakes
// waiting their turn. It returns when the driver is finished, or when the poll fails (logged).
func (l *Loop) Run(d Driver) {
	for {
		evs, err := l.Poll.Wait(l.pollTimeout(d))
		if err != nil {
			l.Log.Error("dwell: poll failed; loop stops", "loop", l.ID, "err", err)
			return
		}
		l.Clk.Tick()
		l.SW.BeginTurn(l.Clk.Now)
		if countStats {
			l.Counts.Turns++
		}
		for i := range evs {
			ev := &evs[i]
			switch fd := ev.FD(); {
			case ev.Tag() != 0:
				d.Event(ev)
			case fd == l.Wakeup:
				d.Posted()
			default:
				// A listener's, unless a shutdown closed it earlier in the batch.
				if ln := l.Acc.At(fd); ln >= 0 {
					d.Accept(ln)
				}
			}
		}
		if l.TLS != nil {
			l.TLS.RunBuffered()
		}
		for t := l.Timers.PopDue(l.Clk.Now); t != nil; t = l.Timers.PopDue(l.Clk.Now) {
			d.Due(t)
		}
		d.Turn()
		d.Flush()
		if l.TLS != nil && l.TLS.HandshakesWaiting() {
			l.TLS.RunHandshakes() // after the open connections: see tlsturn.go
			d.Flush()
		}
		if n := l.SW.EndTurn(l.Clk.Read()); n != nil {
			l.SW.Report(n, l.Log, l.ID)
		}
		if d.Finished() {
			return
		}
	}
}

// pollTimeout is how long the next poll may wait: not at all while the driver or TLS has work
// for the turn; else until the next timer. (A poll takes what is ready before it waits, so a
// busy loop never waits.)
func (l *Loop) pollTimeout(d Driver) int {
	if d.Busy() || l.TLS != nil && (l.TLS.WantsRead() || l.TLS.HandshakesWaiting()) {
		return 0
	}
	when, ok := l.Timers.Next()
	if !ok {
		return -1
	}
	wait := when - l.Clk.Now
	if wait <= 0 {
		return 0
	}
	return int((wait + int64(time.Millisecond) - 1) / int64(time.Millisecond))
}

// A Clock is a loop's reading of the time. It is read once a turn (Tick), which every deadline
// of the turn is measured from, and afresh only where a wait is armed (Read); its monotonic
// readings are nanoseconds since the loop started, which the timers' deadlines are (Timer.when).
// It keeps the value of the Date field for the turn's second, formatted once a second.
type Clock struct {
	Now  int64    // the latest reading: the turn's, or a fresher one of Read
	Date [29]byte // the Date field's value (RFC 9110 §5.6.7) for the turn's second

	epoch   time.Time // the loop's start, which Now counts from
	turn    time.Time // the clock at the turn's start, read with both clocks
	turnNow int64     // turn's monotonic reading
	dateSec int64     // the second Date was formatted for
}

// NewClock returns a clock started now, and read.
func NewClock() Clock {
	c := Clock{epoch: time.Now()}
	c.Tick()
	return c
}

// Tick reads the clock for the turn, formatting Date again when the second has changed.
func (c *Clock) Tick() {
	t := time.Now()
	c.Now = int64(t.Sub(c.epoch))
	c.turn, c.turnNow = t, c.Now
	if s := t.Unix(); s != c.dateSec {
		c.dateSec = s
		t.UTC().AppendFormat(c.Date[:0], "Mon, 02 Jan 2006 15:04:05 GMT")
	}
}

// TurnNow returns the turn's reading, which a Read since does not move.
func (c *Clock) TurnNow() int64 { return c.turnNow }

// Read reads the clock afresh, for a wait armed now: the turn's reading can be as old as the
// turn, and a wait armed from it would end early by that much. The fresh reading becomes Now,
// which only moves it forward.
func (c *Clock) Read() int64 {
	c.Now = int64(time.Since(c.epoch))
	return c.Now
}

// Wall returns the time now and its monotonic reading, from the monotonic clock alone (which
// costs less to read than both clocks) and the turn's reading of both: a step of the system's
// clock during a turn shows from the next turn on.
func (c *Clock) Wall() (time.Time, int64) {
	now := int64(time.Since(c.epoch))
	return c.turn.Add(time.Duration(now - c.turnNow)), now
}

// Time returns the time of the monotonic reading at.
func (c *Clock) Time(at int64) time.Time { return c.epoch.Add(time.Duration(at)) }

// Elapsed reads the clock without keeping the reading: safe from any goroutine (the watchdog's),
// since it reads only the loop's start, which never changes.
func (c *Clock) Elapsed() int64 { return int64(time.Since(c.epoch)) }
