package serve

import (
	"sync/atomic"
	"time"
)

// Server statistics. Each loop keeps its counters in plain fields that it alone writes
// (loopCounters): the hot path pays an addition to a field of its own loop, no lock and no
// atomic write. Server.Stats reads them on the loop, through its inbox: it posts a copy to each
// loop and waits for the copies, so that nothing is read while it is being written and no loop
// stops for more than the copy. The gauges — the connections in each state — are not kept on
// every transition either: the loop counts them when asked, walking its connection table. A loop
// that has stopped has final counters, read once its goroutine has ended; a loop that does not
// answer in time (a stalled loop) is reported with the copy it made last, marked Stale.

// statsWait bounds how long Server.Stats waits for a loop's copy (a variable for a test).
var statsWait = 100 * time.Millisecond

// Stats is core.Stats, field for field: core documents them, and its TestFaceLayouts
// checks that the two are laid out alike.
type Stats struct {
	Total LoopStats
	Loops []LoopStats
}

// LoopStats is core.LoopStats, field for field: core documents them, and its TestFaceLayouts
// checks that the two are laid out alike.
type LoopStats struct {
	Loop                   int
	AsOf                   time.Time
	Stale                  bool
	Stopped                bool
	Accepted               int64
	Requests               int64
	Refused                Refusals
	Panics                 int64
	BytesIn                int64
	BytesOut               int64
	Turns                  int64
	Stalls                 int64
	LongestTurn            time.Duration
	TLSHandshakes          int64
	TLSHandshakeFailures   int64
	TLSHandshakesAbandoned int64
	Conns                  ConnStates
}

// ConnStates is core.ConnStates, field for field: core documents them, and its TestFaceLayouts
// checks that the two are laid out alike.
type ConnStates struct {
	Open           int
	Idle           int
	Reading        int
	Running        int
	Parked         int
	Working        int
	Detached       int
	Writing        int
	Closing        int
	HandedOver     int
	HTTP2          int
	Streams        int
	ParkedStreams  int
	TLS            int
	TLSHandshaking int
}

// Refusals is core.Refusals, field for field: core documents them, and its TestFaceLayouts
// checks that the two are laid out alike.
type Refusals struct {
	BadRequest           int64
	RequestTimeout       int64
	ContentTooLarge      int64
	URITooLong           int64
	ExpectationFailed    int64
	HeaderFieldsTooLarge int64
	NotImplemented       int64
	Unavailable          int64
	VersionNotSupported  int64
	Other                int64
}

// Total returns the number of answers counted.
func (r Refusals) Total() int64 {
	return r.BadRequest + r.RequestTimeout + r.ContentTooLarge + r.URITooLong + r.ExpectationFailed +
		r.HeaderFieldsTooLarge + r.NotImplemented + r.Unavailable + r.VersionNotSupported + r.Other
}

// The statuses Refusals counts, in the order of its fields.
var refusalStatuses = [...]int{400, 408, 413, 414, 417, 431, 501, 503, 505}

const nRefusals = len(refusalStatuses) + 1 // and Other

// loopCounters are a loop's counters: plain fields, written by the loop alone (its goroutine,
// and the coroutines it switches into, which run while it waits), read on the loop by
// snapshot, or after the loop has ended.
type loopCounters struct {
	accepted, Requests, panics int64
	refused                    [nRefusals]int64
}

// refused counts one of the server's own answers.
func (l *Loop) Refused(status int) {
	if !CountStats {
		return
	}
	i := len(refusalStatuses) // Other
	for j, s := range refusalStatuses {
		if s == status {
			i = j
			break
		}
	}
	l.Ctr.refused[i]++
}

// Stats returns the server's statistics: per loop, and their sum. It may be called from any
// goroutine of the application's, at any time (before the server starts it returns zeros). It
// asks each loop for a copy and waits for them — a turn of each loop at most, up to 100 ms; a
// loop that does not answer by then is reported as it was last, marked Stale. Since it waits
// for the loops, code that runs on a loop must not call it (it panics there): a handler calls it
// through wait.Do, which parks the handler, not its loop, while a goroutine waits.
func (s *Server) Stats() Stats {
	s.Mu.Lock()
	loops := s.Loops
	s.Mu.Unlock()
	for _, l := range loops {
		l.mustBeOffLoop("Server.Stats", "it waits for the loops; call it from a goroutine of the application's (from a handler, through wait.Do)")
	}
	st := Stats{Loops: make([]LoopStats, len(loops))}
	got := make([]bool, len(loops))

	// The loops answer through their inboxes; the last to answer ends the wait.
	answers := make(chan statsAnswer, len(loops)) // never blocks a loop: late answers stay here
	done := make(chan struct{})
	var pending atomic.Int32
	pending.Store(1) // the caller's own share, until every loop has been asked
	for i, l := range loops {
		pending.Add(1)
		err := l.Post(func() {
			answers <- statsAnswer{i, l.snapshot(false)}
			if pending.Add(-1) == 0 {
				close(done)
			}
		})
		if err != nil {
			// Stopped: its counters are final once its goroutine has ended, which follows
			// the inbox's close at once.
			pending.Add(-1)
			<-l.done
			st.Loops[i], got[i] = l.snapshot(true), true
		}
	}
	if pending.Add(-1) != 0 {
		t := time.NewTimer(statsWait)
		select {
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
	for len(answers) > 0 {
		a := <-answers
		st.Loops[a.i], got[a.i] = a.ls, true
	}
	for i, l := range loops {
		ls := &st.Loops[i]
		if !got[i] {
			if last := l.lastStats.Load(); last != nil {
				*ls = *last
			}
			ls.Loop, ls.Stale = l.ID, true
		}
		ls.Stalls = l.SW.Stalls()
		ls.LongestTurn = l.SW.LongestTurn()
		st.Total.add(ls)
	}
	st.Total.Loop = -1
	return st
}

// A statsAnswer is a loop's copy of its statistics, for Server.Stats.
type statsAnswer struct {
	i  int
	ls LoopStats
}

// snapshot copies the loop's counters and counts its connections by state. It runs on the
// loop, or once the loop has ended (stopped).
func (l *Loop) snapshot(stopped bool) LoopStats {
	k, e := &l.Ctr, &l.Counts
	ls := LoopStats{
		Loop: l.ID, AsOf: time.Now(), Stopped: stopped,
		Accepted: k.accepted, Requests: k.Requests, Panics: k.panics,
		BytesIn: e.BytesIn, BytesOut: e.BytesOut, Turns: e.Turns,
		TLSHandshakes: e.TLSDone, TLSHandshakeFailures: e.TLSFailed, TLSHandshakesAbandoned: e.TLSAbandoned,
		Refused: Refusals{
			BadRequest: k.refused[0], RequestTimeout: k.refused[1], ContentTooLarge: k.refused[2],
			URITooLong: k.refused[3], ExpectationFailed: k.refused[4], HeaderFieldsTooLarge: k.refused[5],
			NotImplemented: k.refused[6], Unavailable: k.refused[7], VersionNotSupported: k.refused[8],
			Other: k.refused[9],
		},
	}
	for _, c := range l.Conns {
		if c != nil && c.State != StClosed {
			l.countConn(&ls.Conns, c)
		}
	}
	if !stopped {
		last := ls
		l.lastStats.Store(&last)
	}
	return ls
}

// countConn counts c in the state it is in.
func (l *Loop) countConn(n *ConnStates, c *Socket) {
	n.Open++
	if c.Secure() {
		n.TLS++
		if c.Transport().Handshaking(int(c.FD), c) {
			n.TLSHandshaking++
		}
	}
	switch c.State {
	case StHandedOver:
		if sc, ok := c.Handed().Proto.(StreamCounter); ok {
			sc.CountStreams(n)
			break
		}
		n.HandedOver++
	case StHandler:
		switch c.Ctx.State {
		case ctxRunning:
			n.Running++
		case ctxDetached, ctxDetachedReady:
			n.Detached++
		case ctxParked:
			if c.Ctx.parkf&parkWorking != 0 {
				n.Working++
			} else {
				n.Parked++
			}
		default:
			n.Parked++
		}
	case stLinger:
		n.Closing++
	case StClosing:
		if c.Out.Size() > 0 {
			n.Writing++
		} else {
			n.Closing++
		}
	default: // StIdle, StHead, StDrain
		switch {
		case c.Out.Size() > 0:
			n.Writing++
		case c.State == StIdle:
			n.Idle++
		default:
			n.Reading++
		}
	}
}

// add adds a loop's statistics to the sum t.
func (t *LoopStats) add(ls *LoopStats) {
	if ls.AsOf.After(t.AsOf) {
		t.AsOf = ls.AsOf
	}
	t.Stale = t.Stale || ls.Stale
	t.Stopped = t.Stopped || ls.Stopped
	t.Accepted += ls.Accepted
	t.Requests += ls.Requests
	t.Panics += ls.Panics
	t.BytesIn += ls.BytesIn
	t.BytesOut += ls.BytesOut
	t.Turns += ls.Turns
	t.Stalls += ls.Stalls
	t.LongestTurn = max(t.LongestTurn, ls.LongestTurn)
	t.TLSHandshakes += ls.TLSHandshakes
	t.TLSHandshakeFailures += ls.TLSHandshakeFailures
	t.TLSHandshakesAbandoned += ls.TLSHandshakesAbandoned
	r, q := &t.Refused, &ls.Refused
	r.BadRequest += q.BadRequest
	r.RequestTimeout += q.RequestTimeout
	r.ContentTooLarge += q.ContentTooLarge
	r.URITooLong += q.URITooLong
	r.ExpectationFailed += q.ExpectationFailed
	r.HeaderFieldsTooLarge += q.HeaderFieldsTooLarge
	r.NotImplemented += q.NotImplemented
	r.Unavailable += q.Unavailable
	r.VersionNotSupported += q.VersionNotSupported
	r.Other += q.Other
	c, d := &t.Conns, &ls.Conns
	c.Open += d.Open
	c.Idle += d.Idle
	c.Reading += d.Reading
	c.Running += d.Running
	c.Parked += d.Parked
	c.Working += d.Working
	c.Detached += d.Detached
	c.Writing += d.Writing
	c.Closing += d.Closing
	c.HandedOver += d.HandedOver
	c.HTTP2 += d.HTTP2
	c.Streams += d.Streams
	c.ParkedStreams += d.ParkedStreams
	c.TLS += d.TLS
	c.TLSHandshaking += d.TLSHandshaking
}

// statsState is what a Loop keeps for Server.Stats.
type statsState struct {
	Ctr       loopCounters
	lastStats atomic.Pointer[LoopStats] // the last copy, for a Stats call the loop does not answer in time
}
