package engine

import (
	"slices"
	"time"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// The handshakes' share of a turn. A TLS handshake's first step — the key exchange, and the
// signature over the server's flight — is the costliest work a loop does for a connection:
// about 0.5 ms with an ECDSA certificate, 1.5 ms with an RSA one. A storm of new connections
// (clients reconnecting after a restart, a flood) would otherwise fill whole turns with them,
// and a request on a connection already open would wait behind hundreds of handshakes. So
// handshakes have a place of their own in a turn: while the loop handles what the poller
// reported, a connection whose handshake can go on is queued (its readability unwatched, so
// that the poller does not report it turn after turn), and once the connections already open
// have been served, the queue is taken up, oldest first, until the turn's handshakes have
// taken handshakeBudget; the rest wait for the next turn, which polls first. A request on an
// open connection thus waits for at most one turn's handshakes, and the handshakes still take
// most of a loop that has nothing else to do, none behind those that came after it.

// handshakeBudget is the time a turn spends on handshakes before the rest wait for the next
// turn. A step already begun is finished: a turn's handshakes take at most this and one step.
const handshakeBudget = 500 * time.Microsecond

// handshakes is what a TLS loop keeps for the budget.
type handshakes struct {
	spent   int64      // loop-clock nanoseconds the turn's handshakes have taken
	running bool       // the turn's handshakes are being run: a handshake goes on (see handshake)
	waiting []*tlsConn // handshakes to run, oldest first from next; nil: closed meanwhile
	next    int
}

// handshake runs s's handshake as far as the socket allows when the turn's handshakes are
// being run and the budget has room; otherwise it queues s and reports EAGAIN, as if the socket
// had nothing yet.
func (t *TLS) handshake(s *tlsConn) netpoll.Errno {
	if !t.running || t.spent >= int64(handshakeBudget) {
		if !s.deferred {
			s.deferred = true
			t.waiting = append(t.waiting, s)
		}
		return netpoll.EAGAIN
	}
	start := t.opts.Clock.Read()
	e := s.handshake()
	t.spent += t.opts.Clock.Read() - start
	return e
}

// RunHandshakes runs the queued handshakes, oldest first, until the turn's budget is spent.
// The loop calls it once it has served the connections already open.
func (t *TLS) RunHandshakes() {
	t.spent, t.running = 0, true
	for t.next < len(t.waiting) && t.spent < int64(handshakeBudget) {
		s := t.waiting[t.next]
		t.waiting[t.next] = nil
		t.next++
		if s == nil {
			continue // closed while it waited
		}
		s.deferred = false
		if !s.ep.Closed() && t.lookup(s.fd) == s {
			s.ep.Readable() // its handshake, and what follows it when the client sent it
		}
	}
	t.running = false
	if t.next == len(t.waiting) {
		t.waiting, t.next = t.waiting[:0], 0
	} else if t.next > len(t.waiting)/2 {
		n := copy(t.waiting, t.waiting[t.next:])
		clear(t.waiting[n:])
		t.waiting, t.next = t.waiting[:n], 0
	}
}

// HandshakesWaiting reports whether handshakes were deferred: the loop must not sleep in its
// poll then.
func (t *TLS) HandshakesWaiting() bool { return t.next < len(t.waiting) }

// Queued returns the number of handshakes waiting for a later turn.
func (t *TLS) Queued() int {
	n := 0
	for _, s := range t.waiting[t.next:] {
		if s != nil {
			n++
		}
	}
	return n
}

// forget takes a closing connection's handshake out of the queue.
func (t *TLS) forget(s *tlsConn) {
	if s.deferred {
		if i := slices.Index(t.waiting[t.next:], s); i >= 0 {
			t.waiting[t.next+i] = nil
		}
		s.deferred = false
	}
}

// Deferred reports whether fd's handshake waits for a later turn: its readability is not to be
// watched meanwhile, so that the poller does not report it turn after turn.
func (t *TLS) Deferred(fd int) bool {
	s := t.lookup(fd)
	return s != nil && s.deferred
}
