package middleware

import (
	"errors"
	"hash/maphash"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/alias"
)

// ErrRateLimited is the error of RateLimit's refusals, as core.Options.WriteRefusal sees it in
// core.Refusal.Err: for a WriteRefusal that answers them its own way (a problem type of
// draft-ietf-httpapi-ratelimit-headers, say).
var ErrRateLimited = errors.New("dwell: " + rateLimitedMsg)

// rateLimitedMsg is what a refusal says, to the client.
const rateLimitedMsg = "rate limit exceeded"

// RateLimitOptions configures RateLimit. The zero value limits nothing: set Rate.
type RateLimitOptions struct {
	// Rate is how many requests a key may make per Period, on average: one every Period/Rate,
	// after a burst of Burst at once. Zero or negative limits nothing: RateLimit then returns
	// the handler it wraps unchanged, so that a flag of 0 turns the limit off. A Rate so high
	// that Period/Rate is under a nanosecond panics.
	Rate int

	// Period is the time Rate is counted over. Zero means one second. Negative panics.
	Period time.Duration

	// Burst is how many requests a key that has been quiet may make at once: of requests
	// that come within Period/Rate of the first, the (Burst+1)th is refused. Zero means Rate,
	// so that with the defaults the (Rate+1)th request of a burst is refused. A key that has
	// spent its burst gets one request every Period/Rate, and has its whole burst back
	// Burst×Period/Rate after its last request; so a key makes at most Burst+Rate−1
	// requests in any time shorter than Period. Negative panics.
	Burst int

	// Key returns the key a request is counted under: a session, an API token (the
	// Authorization field), a tenant. It may return bytes that are only borrowed (c.Bytes()'s):
	// RateLimit keeps a 64-bit hash of them, never the bytes.
	// All the requests for which it returns nothing share one limit. It runs in the handler
	// and may park. Nil means the client's address as ClientIP gives it, IPv6 addresses
	// grouped by IPv6Prefix.
	Key func(c *core.Ctx) []byte

	// IPv6Prefix is how many leading bits of an IPv6 client address make its key, when Key
	// is nil. Zero means 64: a provider gives each customer at least a /64, from which any
	// address can be used, so a limit per address would be no limit for an IPv6 client. 128
	// limits each address. IPv4 addresses are always whole. Negative or over 128 panics.
	IPv6Prefix int

	// MaxKeys bounds the keys whose state is kept, and so the memory: the table takes 17
	// bytes per key, allocated once by RateLimit — 1.1 MB for the default — and never grows.
	// Zero means 65,536. A key needs an entry only while it is in debt, up to
	// Burst×Period/Rate after its last request (a second with the defaults): size it for the
	// distinct keys seen in that time. RateLimit says what happens when more are. Negative
	// panics.
	MaxKeys int

	// Name is the policy's name in the RateLimit-Policy and RateLimit fields, for clients
	// that meet several limits: give each RateLimit on a route a name of its own. "" means
	// "default". A byte outside printable ASCII, a quote or a backslash panics.
	Name string

	// Error writes the 429, after RateLimit has set Retry-After and the RateLimit fields.
	// Nil means the server's own refusal format: core.Ctx.Refuse with ErrRateLimited, which
	// the server's core.Options.WriteRefusal writes (with JSONRefusal,
	// {"error":"rate limit exceeded"}), or TextError's plain text when it has none.
	Error ErrorFunc

	// Now tells the time, for tests. Nil means time.Now, whose monotonic clock keeps the
	// limit from moving when the wall clock is set.
	Now func() time.Time
}

// RateLimit limits how fast each client may make requests: a limit per key, the client's
// address by default (the address ClientIP gives, so put RealIP before RateLimit behind a
// proxy, or every client behind it shares the proxy's limit). It implements the generic cell
// rate algorithm (GCRA), a token bucket kept as one time per key: a key may make o.Burst
// requests at once, then one every o.Period/o.Rate, and a refused request costs it nothing.
//
// A request over the limit is refused with 429 Too Many Requests in the server's refusal format
// (the JSON of JSONRefusal when the server answers its own refusals with it), or as o.Error
// writes it, with Retry-After: the whole seconds until the key may make a request again.
// Every response of the routes RateLimit wraps, refused or not, carries the fields of
// draft-ietf-httpapi-ratelimit-headers, so that a client can slow down before it is refused:
//
//	RateLimit-Policy: "default";q=10;w=1
//	RateLimit: "default";r=3;t=1
//
// q and w are the policy, Rate per Period (scaled to whole seconds when Period is not); r is
// how many requests the key may make now, and t the seconds until it may make one more,
// rounded up — the draft's "effective window", which it wants in whole seconds. On a 429, r is
// 0 and t is the Retry-After. The fields are added, not set, so that the limits of several
// RateLimits (a global one and one on writes) each have their item: give them Names. Being
// set before the handler runs, they stay on the server's own answers for it (a 413, a 503).
//
// One RateLimit's limit is shared by every handler it wraps: put on a group of write routes,
// it counts a client's writes together. Each call of RateLimit makes a limit of its own. The
// limit is counted where the handler runs, across the server's loops, so it holds in the
// process: several processes behind a load balancer have a limit each.
//
// # Memory
//
// The keys' state is a table of o.MaxKeys entries (17 bytes each) allocated once; the limiter
// allocates nothing for a request, whether its key is known or new (a refusal's body aside). A
// key needs an entry only while it is in debt, and one whose debt has run out is forgotten for
// free. When more keys are in debt than the table holds (precisely: than the 8 entries of the
// bucket a new key's hash falls in), the new key takes the entry of the key closest to
// recovering, whose remaining debt is forgotten: that key, if it comes back, gets its burst
// back early — the limit on it loosens, never tightens, and no client is refused for want of
// room (nginx's limit_req forgets the least recently used key instead, whatever its debt). A
// client cannot make its own key the one forgotten cheaply: keys are hashed with a random
// seed, so it cannot pick its bucket, and a key at its limit is forgotten only once the 8 keys
// of its bucket are all further in debt — about MaxKeys×Burst requests under other keys within
// the time it waits, to gain one burst. What a per-key limit cannot stop is many keys each
// under its limit: 100,000 addresses each get their burst. That is the work of a limit on the
// whole server (core.Options.MaxConns) or of the network in front.
func RateLimit(o RateLimitOptions) func(core.Handler) core.Handler {
	if o.Rate <= 0 {
		return func(next core.Handler) core.Handler { return next }
	}
	l := newRateLimiter(o)
	return func(next core.Handler) core.Handler {
		return func(c *core.Ctx) { l.serve(c, next) }
	}
}

// rateLimiter is a RateLimit's settings, checked, and its table.
type rateLimiter struct {
	interval int64 // nanoseconds between requests at the sustained rate: Period/Rate
	window   int64 // Burst×interval: how far ahead of now a key's arrival time may go
	table    *rateTable
	seed     maphash.Seed
	key      func(c *core.Ctx) []byte
	v6mask   [16]byte // the bits of an IPv6 address its key keeps
	now      func() time.Time
	start    time.Time
	policy   string    // the RateLimit-Policy value
	item     string    // the RateLimit value's start: `"name";r=`
	answer   ErrorFunc // nil: the server's refusal format
}

// newRateLimiter checks o, which sets a limit (o.Rate > 0), and makes its table. A mistake
// panics with what to write instead.
func newRateLimiter(o RateLimitOptions) *rateLimiter {
	period, burst, maxKeys, v6 := o.Period, o.Burst, o.MaxKeys, o.IPv6Prefix
	switch {
	case period < 0:
		panic("dwell: RateLimit: Period " + period.String() + " is negative; write the time Rate is counted over, or 0 for a second")
	case burst < 0:
		panic("dwell: RateLimit: Burst " + strconv.Itoa(burst) + " is negative; write how many requests may come at once, or 0 for Rate")
	case maxKeys < 0:
		panic("dwell: RateLimit: MaxKeys " + strconv.Itoa(maxKeys) + " is negative; write how many keys to keep, or 0 for 65,536")
	case v6 < 0 || v6 > 128:
		panic("dwell: RateLimit: IPv6Prefix " + strconv.Itoa(v6) + " is not a prefix length; write 1 to 128, or 0 for 64")
	}
	if period == 0 {
		period = time.Second
	}
	if burst == 0 {
		burst = o.Rate
	}
	if maxKeys == 0 {
		maxKeys = 1 << 16
	}
	if v6 == 0 {
		v6 = 64
	}
	interval := int64(period) / int64(o.Rate)
	if interval == 0 {
		panic("dwell: RateLimit: Rate " + strconv.Itoa(o.Rate) + " per " + period.String() +
			" is more than one request a nanosecond; lower Rate or lengthen Period")
	}
	// The window and one interval more must fit in an int64 of nanoseconds (292 years).
	if int64(burst) >= math.MaxInt64/interval-1 {
		panic("dwell: RateLimit: a Burst of " + strconv.Itoa(burst) + " at one request every " +
			time.Duration(interval).String() + " takes centuries to recover; lower Burst or raise Rate")
	}
	name := o.Name
	if name == "" {
		name = "default"
	}
	if !isSFString(name) {
		panic("dwell: RateLimit: Name " + strconv.Quote(name) +
			" cannot be a policy name; write printable ASCII without quotes or backslashes")
	}
	l := &rateLimiter{
		interval: interval,
		window:   int64(burst) * interval,
		table:    newRateTable(maxKeys),
		seed:     maphash.MakeSeed(),
		key:      o.Key,
		now:      o.Now,
		policy:   policyField(name, o.Rate, period),
		item:     `"` + name + `";r=`,
		answer:   o.Error,
	}
	if l.now == nil {
		l.now = time.Now
	}
	for i := range l.v6mask {
		bits := min(max(v6-8*i, 0), 8)
		l.v6mask[i] = byte(0xff << (8 - bits))
	}
	l.start = l.now()
	return l
}

// serve counts c's request under its key, adds the RateLimit fields, and runs next or refuses.
func (l *rateLimiter) serve(c *core.Ctx, next core.Handler) {
	now := max(int64(l.now().Sub(l.start)), 0) // a test clock set back is the start
	debt, ok := l.table.take(l.hash(c), now, l.interval, l.window)
	r, t := l.remaining(debt)
	var buf [64]byte
	c.AddHeader("RateLimit-Policy", l.policy)
	c.AddHeader("RateLimit", borrowString(l.rateField(buf[:0], r, t)))
	if ok {
		next(c)
		return
	}
	c.SetHeader("Retry-After", borrowString(strconv.AppendInt(buf[:0], t, 10)))
	switch {
	case l.answer != nil:
		l.answer(c, 429, rateLimitedMsg)
	case !c.Refuse(429, ErrRateLimited):
		TextError(c, 429, rateLimitedMsg)
	}
}

// remaining returns, for a key debt nanoseconds in debt, the r and t of its RateLimit field:
// the requests it may make now, r whole intervals left of the window, and the whole seconds
// until the (r+1)th, once the debt has fallen by what is missing of it.
func (l *rateLimiter) remaining(debt int64) (r, t int64) {
	r = (l.window - debt) / l.interval
	return r, ceilSeconds((r+1)*l.interval - (l.window - debt))
}

// hash returns the hash of c's key.
func (l *rateLimiter) hash(c *core.Ctx) uint64 {
	if l.key != nil {
		return maphash.Bytes(l.seed, l.key(c))
	}
	// An IPv4 address is hashed whole, as As16 maps it into ::ffff:0:0/96, which no IPv6
	// client has (ClientIP unmaps): its key is never an IPv6 prefix's.
	a := ClientIP(c)
	b := a.As16()
	if !a.Is4() {
		for i := range b {
			b[i] &= l.v6mask[i]
		}
	}
	return maphash.Bytes(l.seed, b[:])
}

// rateField appends the RateLimit field's value, `"name";r=R;t=T`, to b.
func (l *rateLimiter) rateField(b []byte, r, t int64) []byte {
	b = append(b, l.item...)
	b = strconv.AppendInt(b, r, 10)
	b = append(b, ";t="...)
	return strconv.AppendInt(b, t, 10)
}

// borrowString returns b's bytes as a string without a copy, for a header value: setting a
// field copies the value into the response (core.Ctx.SetHeader's doc), so nothing keeps the
// string past the call, and b, a buffer on the caller's stack, is never written while it
// lives. It is what makes the fields cost no allocation.
func borrowString(b []byte) string { return alias.String(b) }

// ceilSeconds returns d nanoseconds in whole seconds, rounded up: a client that waits that
// long finds the request it waits for available.
func ceilSeconds(d int64) int64 { return (d + int64(time.Second) - 1) / int64(time.Second) }

// policyField returns the RateLimit-Policy value of rate requests per period: q per w
// seconds, which the draft wants whole, so a period that is not is scaled to the next whole
// second (2 per 1.5 s is q=2;w=2, rounded down so as not to promise more than the limit).
func policyField(name string, rate int, period time.Duration) string {
	w := ceilSeconds(int64(period))
	q := int64(rate)
	if time.Duration(w)*time.Second != period {
		q = int64(float64(rate) * float64(time.Duration(w)*time.Second) / float64(period))
	}
	return `"` + name + `";q=` + strconv.FormatInt(q, 10) + ";w=" + strconv.FormatInt(w, 10)
}

// isSFString reports whether s can be a Structured Field String (RFC 9651 §3.3.3) written
// without escapes: printable ASCII but the quote and the backslash.
func isSFString(s string) bool {
	for i := range len(s) {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return !strings.ContainsAny(s, `"\`)
}
