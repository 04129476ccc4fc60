package middleware

import (
	"sync/atomic"
	"time"
)

// A logStamp is the text of one second of a line's time as RFC 3339 writes it: the date and the
// time of day before the fraction, the zone after it.
type logStamp struct {
	sec        int64
	loc        *time.Location
	head, zone []byte
}

// A stampCache formats times as time.RFC3339Nano does, with what changes once a second
// formatted once a second: a line's time then costs a fraction of AppendFormat's work. Loops
// logging through one handler share it; the first to log in a new second pays an allocation.
type stampCache struct {
	cur atomic.Pointer[logStamp]
}

// append appends t as t.AppendFormat(b, time.RFC3339Nano) does.
func (c *stampCache) append(b []byte, t time.Time) []byte {
	s := c.cur.Load()
	if s == nil || s.sec != t.Unix() || s.loc != t.Location() {
		s = &logStamp{sec: t.Unix(), loc: t.Location(),
			head: t.AppendFormat(nil, "2006-01-02T15:04:05"), zone: t.AppendFormat(nil, "Z07:00")}
		c.cur.Store(s)
	}
	b = append(b, s.head...)
	if ns := t.Nanosecond(); ns != 0 {
		frac := [10]byte{'.'}
		copy(frac[1:], threeDigits[ns/1e6][:])
		copy(frac[4:], threeDigits[ns/1e3%1e3][:])
		copy(frac[7:], threeDigits[ns%1e3][:])
		n := len(frac)
		for frac[n-1] == '0' { // RFC3339Nano drops the fraction's trailing zeros
			n--
		}
		b = append(b, frac[:n]...)
	}
	return append(b, s.zone...)
}
