package middleware_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
)

// testClock is a clock the test moves, for RateLimitOptions.Now.
type testClock struct{ ns atomic.Int64 }

func (c *testClock) Now() time.Time          { return time.Unix(1_800_000_000, c.ns.Load()) }
func (c *testClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func written(c *core.Ctx) {
	c.SetStatus(201)
	c.WriteString("written")
}

// post sends a POST from addr through c and returns the response and its body.
func post(t *testing.T, c *coretest.Client, addr string, header ...string) (*http.Response, string) {
	t.Helper()
	r := coretest.NewRequest("POST", "/todos", strings.NewReader(`{"title":"a"}`))
	r.RemoteAddr = addr
	for _, h := range header {
		k, v, _ := strings.Cut(h, ": ")
		r.Header.Set(k, v)
	}
	resp := c.Do(r)
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestRateLimit: with N writes a second per address, the (N+1)th within the second is
// refused with 429 in the server's refusal format (JSON with JSONRefusal, plain text without a
// WriteRefusal), Retry-After and the RateLimit fields; another address is unaffected; once
// the clock has moved on, the first passes again.
func TestRateLimit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    core.Options
		ctype   string
		refusal string
	}{
		{"JSONRefusal", core.Options{WriteRefusal: middleware.JSONRefusal}, "application/json", `{"error":"rate limit exceeded"}` + "\n"},
		{"no WriteRefusal", core.Options{}, "text/plain; charset=utf-8", "429 Too Many Requests: rate limit exceeded\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 5
			var clock testClock
			rl := middleware.RateLimit(middleware.RateLimitOptions{Rate: n, Now: clock.Now})
			c := coretest.NewClient(t, rl(written), tc.opts)
			const a, b = "203.0.113.7:40000", "203.0.113.8:40000"
			for i := range n {
				resp, body := post(t, c, a)
				want := `"default";r=` + string(rune('0'+n-1-i)) + ";t=1"
				if resp.StatusCode != 201 || body != "written" || resp.Header.Get("RateLimit") != want ||
					resp.Header.Get("RateLimit-Policy") != `"default";q=5;w=1` || resp.Header.Get("Retry-After") != "" {
					t.Fatalf("write %d: %d %q %v", i+1, resp.StatusCode, body, resp.Header)
				}
				clock.Advance(time.Millisecond)
			}
			resp, body := post(t, c, a)
			if resp.StatusCode != 429 || body != tc.refusal || resp.Header.Get("Content-Type") != tc.ctype ||
				resp.Header.Get("Retry-After") != "1" || resp.Header.Get("RateLimit") != `"default";r=0;t=1` ||
				resp.Header.Get("RateLimit-Policy") != `"default";q=5;w=1` {
				t.Fatalf("write %d: %d %q %v", n+1, resp.StatusCode, body, resp.Header)
			}
			if resp, _ := post(t, c, b); resp.StatusCode != 201 || resp.Header.Get("RateLimit") != `"default";r=4;t=1` {
				t.Fatalf("another address: %d %v", resp.StatusCode, resp.Header)
			}
			clock.Advance(200 * time.Millisecond) // one interval, less the 5 ms already gone: one back
			if resp, _ := post(t, c, a); resp.StatusCode != 201 || resp.Header.Get("RateLimit") != `"default";r=0;t=1` {
				t.Fatalf("an interval later: %d %v", resp.StatusCode, resp.Header)
			}
			if resp, _ := post(t, c, a); resp.StatusCode != 429 {
				t.Fatalf("the next at once: %d", resp.StatusCode)
			}
		})
	}
}

// TestRateLimitBehindProxy: behind a trusted proxy, the client's address from RealIP is the
// key, not the proxy's.
func TestRateLimitBehindProxy(t *testing.T) {
	var clock testClock
	h := chain(written,
		middleware.RealIP(middleware.RealIPOptions{Trusted: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}),
		middleware.RateLimit(middleware.RateLimitOptions{Rate: 1, Now: clock.Now}))
	c := coretest.NewClient(t, h, core.Options{})
	const proxy = "10.0.0.2:5555"
	for _, tc := range []struct {
		client string
		status int
	}{{"198.51.100.1", 201}, {"198.51.100.1", 429}, {"198.51.100.2", 201}, {"198.51.100.2", 429}, {"198.51.100.3", 201}} {
		if resp, _ := post(t, c, proxy, "X-Forwarded-For: "+tc.client); resp.StatusCode != tc.status {
			t.Fatalf("%s: %d, want %d", tc.client, resp.StatusCode, tc.status)
		}
	}
}

// TestRateLimitIPv6: IPv6 clients are counted by /64 unless IPv6Prefix says otherwise; IPv4
// ones by address.
func TestRateLimitIPv6(t *testing.T) {
	for _, tc := range []struct {
		prefix int
		addrs  []string
		status []int
	}{
		{0, []string{"[2001:db8:1:2::1]:1", "[2001:db8:1:2:ffff::9]:1", "[2001:db8:1:3::1]:1"}, []int{201, 429, 201}},
		{128, []string{"[2001:db8:1:2::1]:1", "[2001:db8:1:2::2]:1", "[2001:db8:1:2::1]:1"}, []int{201, 201, 429}},
		{48, []string{"[2001:db8:1:2::1]:1", "[2001:db8:1:3::1]:1", "[2001:db8:2::1]:1"}, []int{201, 429, 201}},
		{0, []string{"192.0.2.1:1", "192.0.2.2:1", "[::ffff:192.0.2.1]:1"}, []int{201, 201, 429}},
	} {
		var clock testClock
		rl := middleware.RateLimit(middleware.RateLimitOptions{Rate: 1, IPv6Prefix: tc.prefix, Now: clock.Now})
		c := coretest.NewClient(t, rl(written), core.Options{})
		for i, a := range tc.addrs {
			if resp, _ := post(t, c, a); resp.StatusCode != tc.status[i] {
				t.Errorf("/%d, %s: %d, want %d", tc.prefix, a, resp.StatusCode, tc.status[i])
			}
		}
	}
}

// TestRateLimitKey: a key of the application's, here a token, borrowed from the request; the
// requests without one share a limit.
func TestRateLimitKey(t *testing.T) {
	var clock testClock
	rl := middleware.RateLimit(middleware.RateLimitOptions{
		Rate: 2, Period: time.Minute, Now: clock.Now, Name: "per-token",
		Key: func(c *core.Ctx) []byte { v, _ := c.Bytes().Header("Authorization"); return v },
	})
	c := coretest.NewClient(t, rl(written), core.Options{})
	for i, tc := range []struct {
		addr, auth string
		status     int
		field      string
	}{
		{"192.0.2.1:1", "Bearer a", 201, `"per-token";r=1;t=30`},
		{"192.0.2.2:1", "Bearer a", 201, `"per-token";r=0;t=30`}, // the token's limit, from any address
		{"192.0.2.3:1", "Bearer a", 429, `"per-token";r=0;t=30`},
		{"192.0.2.1:1", "Bearer b", 201, `"per-token";r=1;t=30`},
		{"192.0.2.1:1", "", 201, `"per-token";r=1;t=30`},
		{"192.0.2.2:1", "", 201, `"per-token";r=0;t=30`},
		{"192.0.2.3:1", "", 429, `"per-token";r=0;t=30`},
	} {
		var h []string
		if tc.auth != "" {
			h = append(h, "Authorization: "+tc.auth)
		}
		resp, _ := post(t, c, tc.addr, h...)
		if resp.StatusCode != tc.status || resp.Header.Get("RateLimit") != tc.field ||
			resp.Header.Get("RateLimit-Policy") != `"per-token";q=2;w=60` {
			t.Errorf("request %d: %d %v", i, resp.StatusCode, resp.Header)
		}
		if tc.status == 429 && resp.Header.Get("Retry-After") != "30" {
			t.Errorf("request %d: Retry-After %q", i, resp.Header.Get("Retry-After"))
		}
	}
}

// TestRateLimitStacked: two limits on a route each add their items, and a custom Error
// writes the refusal with the fields already set.
func TestRateLimitStacked(t *testing.T) {
	var clock testClock
	h := chain(written,
		middleware.RateLimit(middleware.RateLimitOptions{Rate: 100, Name: "all", Now: clock.Now}),
		middleware.RateLimit(middleware.RateLimitOptions{Rate: 1, Period: time.Hour, Name: "writes", Now: clock.Now,
			Error: func(c *core.Ctx, status int, msg string) {
				c.SetStatus(status)
				json.NewEncoder(c).Encode(map[string]string{"problem": msg, "retry": c.ResponseHeader("Retry-After")})
			}}))
	c := coretest.NewClient(t, h, core.Options{})
	post(t, c, "192.0.2.1:1")
	resp, body := post(t, c, "192.0.2.1:1")
	if resp.StatusCode != 429 || body != `{"problem":"rate limit exceeded","retry":"3600"}`+"\n" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	want := []string{`"all";r=98;t=1`, `"writes";r=0;t=3600`}
	if got := resp.Header.Values("RateLimit"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("RateLimit %q, want %q", got, want)
	}
	if got := resp.Header.Values("RateLimit-Policy"); strings.Join(got, "|") != `"all";q=100;w=1|"writes";q=1;w=3600` {
		t.Errorf("RateLimit-Policy %q", got)
	}
}

// TestRateLimitOff: a Rate of zero or less limits nothing and adds nothing.
func TestRateLimitOff(t *testing.T) {
	for _, rate := range []int{0, -1} {
		c := coretest.NewClient(t, middleware.RateLimit(middleware.RateLimitOptions{Rate: rate})(written), core.Options{})
		for range 3 {
			if resp, _ := post(t, c, "192.0.2.1:1"); resp.StatusCode != 201 || resp.Header.Get("RateLimit") != "" {
				t.Fatalf("Rate %d: %d %v", rate, resp.StatusCode, resp.Header)
			}
		}
	}
}

// TestRateLimitPanics: options that cannot be meant fail when the middleware is made, saying
// what to write instead.
func TestRateLimitPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    middleware.RateLimitOptions
		want string
	}{
		{"negative Period", middleware.RateLimitOptions{Rate: 1, Period: -time.Second}, "Period -1s is negative"},
		{"negative Burst", middleware.RateLimitOptions{Rate: 1, Burst: -1}, "Burst -1 is negative"},
		{"negative MaxKeys", middleware.RateLimitOptions{Rate: 1, MaxKeys: -1}, "MaxKeys -1 is negative"},
		{"IPv6Prefix over 128", middleware.RateLimitOptions{Rate: 1, IPv6Prefix: 129}, "IPv6Prefix 129"},
		{"negative IPv6Prefix", middleware.RateLimitOptions{Rate: 1, IPv6Prefix: -1}, "IPv6Prefix -1"},
		{"Rate too high", middleware.RateLimitOptions{Rate: 2_000_000_000}, "more than one request a nanosecond"},
		{"Burst too long", middleware.RateLimitOptions{Rate: 1, Period: 24 * time.Hour, Burst: 1 << 30}, "centuries"},
		{"quote in Name", middleware.RateLimitOptions{Rate: 1, Name: `a"b`}, "cannot be a policy name"},
		{"control in Name", middleware.RateLimitOptions{Rate: 1, Name: "a\nb"}, "cannot be a policy name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.HasPrefix(msg, "dwell: RateLimit: ") || !strings.Contains(msg, tc.want) {
					t.Errorf("panic %q, want one with %q", msg, tc.want)
				}
			}()
			middleware.RateLimit(tc.o)
		})
	}
}
