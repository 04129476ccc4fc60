package statuspage

import (
	"encoding/json"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/wait"
)

// stream answers with Server-Sent Events: "retry: 2000", then an event "snapshot" at once and one
// every interval, each a Snapshot in JSON on one data line, with rates since the one before.
// Between events the handler parks on its loop's timers (wait.Sleep), so a stream costs its loop
// nothing while it waits. It ends when the client leaves, when its writes fail, or as soon as a
// shutdown begins (core.Seam.WakeOnShutdown), so that the server need not wait for an open page; an
// EventSource reconnects by itself after the retry.
//
// The events keep to a steady cadence: each is due an interval after the one before, whatever
// the snapshot and the write took, unless they took longer than an interval, and then the next
// is an interval after the late one.
func stream(c *core.Ctx, s *core.Server, interval time.Duration) {
	c.SetHeader("Content-Type", "text/event-stream")
	c.SetHeader("X-Accel-Buffering", "no") // a proxy that buffers (nginx) passes each event at once
	if c.Method() == "HEAD" {
		return
	}
	c.Seam().WakeOnShutdown()
	buf := append([]byte(nil), "retry: 2000\n\n"...)
	var prev Snapshot
	due := time.Now()
	for n := 0; ; n++ {
		sn, err := take(c, s)
		if err != nil {
			return // the client left, or a shutdown began
		}
		if n > 0 {
			sn.addRates(&prev)
		}
		buf = appendEvent(buf, &sn)
		if _, err := c.Write(buf); err != nil || c.Flush() != nil {
			return
		}
		buf, prev = buf[:0], sn
		due = due.Add(interval)
		if !time.Now().Before(due) {
			due = time.Now().Add(interval)
		}
		if wait.Sleep(c, time.Until(due)) != nil {
			return // the client left, or a shutdown began
		}
	}
}

// appendEvent appends the event "snapshot" of sn to b. JSON's encoding has no newline, so the
// data is one line.
func appendEvent(b []byte, sn *Snapshot) []byte {
	data, err := json.Marshal(sn)
	if err != nil {
		panic("statuspage: a snapshot does not encode: " + err.Error()) // plain numbers and times
	}
	b = append(b, "event: snapshot\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}
