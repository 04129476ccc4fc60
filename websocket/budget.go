package websocket

import (
	"sync"
	"sync/atomic"

	"github.com/dwellhttp/dwell/internal/bufpool"
)

// Messages in progress. A message that does not arrive whole in one read is gathered in a
// buffer until its last frame, and MaxMessage bounds that buffer per connection — but a client
// decides how many connections it opens, and a message it begins and never ends holds its
// buffer for as long as the connection answers pings. So the buffers of unfinished messages
// are also counted against a Budget that many connections share: past it, the connection that
// holds the most is closed (1009), whichever connection's growth went over; and an unfinished
// message is bounded in time (Options.MessageTimeout), which also ends a message of endless
// empty fragments. A message that arrives whole in one read, the usual case, is never counted:
// it is handed on from the read buffer, with no buffer of its own.

// A Budget bounds the memory held by messages still arriving — the buffers their frames are
// gathered in until the last one comes — across all the connections that share it (those
// whose Options name it, or the package's default budget for the others). When a message's
// buffer would take the total past the budget, the connection holding the most is closed with
// 1009 (CloseMessageTooBig: the message is too big for the server to take now), and counted
// (Closed). A connection on another loop closes in that loop's next turn, so the total can
// pass the budget by what one buffer's growth adds on each loop meanwhile.
//
// A Budget's methods may be called from any goroutine.
type Budget struct {
	max int64

	mu       sync.Mutex
	held     int64 // bytes held by the connections in holders
	evicting int64 // of held, what connections being closed hold
	holders  map[*Conn]holding

	closed atomic.Int64
}

// A holding is what one connection holds against a budget.
type holding struct {
	bytes    int64
	evicting bool // chosen to be closed: not chosen again, and about to give its bytes back
}

// DefaultMessageBudget is the default budget's size: the budget of connections whose Options
// name none.
const DefaultMessageBudget = 64 << 20

// defaultBudget is the budget of the connections whose Options name none.
var defaultBudget = NewBudget(DefaultMessageBudget)

// NewBudget returns a budget of max bytes; max <= 0 means DefaultMessageBudget.
func NewBudget(max int64) *Budget {
	if max <= 0 {
		max = DefaultMessageBudget
	}
	return &Budget{max: max, holders: map[*Conn]holding{}}
}

// Held returns the bytes held now by messages still arriving.
func (b *Budget) Held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

// Closed returns how many connections the budget has closed.
func (b *Budget) Closed() int64 { return b.closed.Load() }

// reserve records that c's message in progress is to hold n bytes (its buffer's new capacity)
// and chooses the connections to close if the budget is over: it reports whether c is one of
// them (the caller then fails c, without growing its buffer), and closes the others, on their
// loops.
func (b *Budget) reserve(c *Conn, n int64) (refused bool) {
	b.mu.Lock()
	h := b.holders[c]
	b.held += n - h.bytes
	if h.evicting {
		b.evicting += n - h.bytes
	}
	h.bytes = n
	b.holders[c] = h
	var others []*Conn
	for b.held-b.evicting > b.max {
		v := b.largest()
		if v == nil {
			break
		}
		vh := b.holders[v]
		vh.evicting = true
		b.holders[v] = vh
		b.evicting += vh.bytes
		if v == c {
			refused = true
		} else {
			others = append(others, v)
		}
	}
	b.mu.Unlock()
	for _, v := range others {
		v.hc.Loop().Post(v.overBudget) // a loop that has stopped has closed it already
	}
	return refused
}

// largest returns the connection holding the most that is not being closed already, or nil.
// b.mu is held.
func (b *Budget) largest() *Conn {
	var best *Conn
	var most int64 = -1
	for c, h := range b.holders {
		if !h.evicting && h.bytes > most {
			best, most = c, h.bytes
		}
	}
	return best
}

// release records that c holds nothing any more: its message ended, or the connection did.
func (b *Budget) release(c *Conn) {
	b.mu.Lock()
	if h, ok := b.holders[c]; ok {
		b.held -= h.bytes
		if h.evicting {
			b.evicting -= h.bytes
		}
		delete(b.holders, c)
	}
	b.mu.Unlock()
}

// chosen reports whether c's message in progress was chosen to be closed.
func (b *Budget) chosen(c *Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.holders[c].evicting
}

// holding returns how many connections hold messages in progress.
func (b *Budget) holding() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.holders)
}

// budget returns the budget the connection's messages count against.
func (o *Options) budget() *Budget {
	if o.Budget != nil {
		return o.Budget
	}
	return defaultBudget
}

// gather appends p to the message in progress, within the budget: it reports false, having
// failed the connection, when the budget chose this connection to close.
func (c *Conn) gather(p []byte) bool {
	if c.msg == nil || len(c.msg)+len(p) > cap(c.msg) {
		need := len(p)
		if c.msg != nil {
			need = max(len(c.msg)+len(p), 2*cap(c.msg))
		}
		if c.o.budget().reserve(c, int64(bufpool.Cap(need))) {
			c.closeOverBudget()
			return false
		}
	}
	c.msg = appendBuf(c.msg, p)
	return true
}

// endGather gives back what the message in progress held against the budget, and ends its
// time bound: it has ended, or the connection has.
func (c *Conn) endGather() {
	if c.msg != nil {
		c.o.budget().release(c)
	}
	c.msgSince = 0
}

// overBudget closes, on its loop, a connection the budget chose, unless the message it was
// chosen for has ended since (a later message of its own is not chosen by that).
func (c *Conn) overBudget() {
	if c.state == stateOpen && c.o.budget().chosen(c) {
		c.closeOverBudget()
	}
}

// closeOverBudget fails the connection for the budget, and counts it.
func (c *Conn) closeOverBudget() {
	c.o.budget().closed.Add(1)
	c.fail(CloseMessageTooBig, "over the server's budget for messages in progress")
}
