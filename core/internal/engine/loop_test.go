package engine

import (
	"net/http"
	"testing"
	"time"
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
