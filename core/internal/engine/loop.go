package engine

import "time"

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
