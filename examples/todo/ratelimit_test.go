package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// doFrom is do from the client address addr ("ip:port"), which the in-process server takes for
// the peer's.
func doFrom(t testing.TB, addr, method, url, body string, fields ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.RemoteAddr = addr
	for _, f := range fields {
		k, v, _ := strings.Cut(f, ": ")
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// checkRefused fails the test unless resp is the rate limit's 429: JSON, with Retry-After and
// the RateLimit fields of the policy "writes" of rate a second.
func checkRefused(t testing.TB, resp *http.Response, body string, rate int) {
	t.Helper()
	policy := fmt.Sprintf(`"writes";q=%d;w=1`, rate)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" ||
		resp.Header.Get("RateLimit-Policy") != policy || resp.Header.Get("RateLimit") != `"writes";r=0;t=1` {
		t.Fatalf("over the limit: %d %q %q", resp.StatusCode, resp.Header, body)
	}
	if msg := errorOf(t, resp, body); msg != "rate limit exceeded" {
		t.Fatalf("the 429 says %q", msg)
	}
}

// TestRateLimit: with -rate 3, a client address makes 3 writes at once and its 4th is refused,
// 429 in JSON with Retry-After and the RateLimit fields; another address is not; a third of a
// second later the first may make one more. Attempts with a wrong token count, and so do
// sign-ins, so the token cannot be guessed faster; reads are not limited.
func TestRateLimit(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1e9, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	url, _, _ := testApp(t, config{rate: 3, token: "s3cret", now: clock})
	const a, b, c, d = "192.0.2.1:1000", "192.0.2.2:1000", "198.51.100.1:1000", "[2001:db8::1]:1000"
	write := func(from string, fields ...string) (*http.Response, string) {
		t.Helper()
		return doFrom(t, from, "POST", url+"/todos", `{"title":"x"}`, append(fields, jsonType)...)
	}
	const auth = "Authorization: Bearer s3cret"

	for i := range 3 {
		resp, body := write(a, auth)
		if resp.StatusCode != 201 || resp.Header.Get("RateLimit") != fmt.Sprintf(`"writes";r=%d;t=1`, 2-i) {
			t.Fatalf("write %d: %d %q %q", i+1, resp.StatusCode, resp.Header.Get("RateLimit"), body)
		}
	}
	resp, body := write(a, auth)
	checkRefused(t, resp, body, 3)
	for _, w := range []struct{ method, path, body string }{{"PUT", "/todos/1", `{"title":"y"}`}, {"DELETE", "/todos/1", ""}, {"POST", "/todos/1/attachment", "data"}} {
		resp, body := doFrom(t, a, w.method, url+w.path, w.body, jsonType, auth)
		checkRefused(t, resp, body, 3)
	}
	if resp, _ := doFrom(t, a, "GET", url+"/todos", ""); resp.StatusCode != 200 || resp.Header.Get("RateLimit") != "" {
		t.Fatalf("a read: %d %q", resp.StatusCode, resp.Header)
	}
	if resp, body := write(b, auth); resp.StatusCode != 201 {
		t.Fatalf("another address: %d %q", resp.StatusCode, body)
	}

	// Guessing: a wrong token, or none, is 401 until the limit, then 429 without a look at
	// the token; sign-ins count too.
	for i := range 3 {
		if resp, body := write(c, "Authorization: Bearer guess"); resp.StatusCode != 401 {
			t.Fatalf("guess %d: %d %q", i+1, resp.StatusCode, body)
		}
	}
	resp, body = write(c, auth)
	checkRefused(t, resp, body, 3)
	for i := range 3 {
		if resp, body := doFrom(t, d, "POST", url+"/session", `{"token":"guess"}`, jsonType); resp.StatusCode != 401 {
			t.Fatalf("sign-in %d: %d %q", i+1, resp.StatusCode, body)
		}
	}
	resp, body = doFrom(t, d, "POST", url+"/session", `{"token":"s3cret"}`, jsonType)
	checkRefused(t, resp, body, 3)
	// The same /64: the same client, as a provider gives each customer one.
	resp, body = write("[2001:db8::2]:1000", auth)
	checkRefused(t, resp, body, 3)

	mu.Lock()
	now = now.Add(time.Second / 3)
	mu.Unlock()
	if resp, body := write(a, auth); resp.StatusCode != 201 {
		t.Fatalf("a third of a second later: %d %q", resp.StatusCode, body)
	}
	resp, body = write(a, auth)
	checkRefused(t, resp, body, 3)
}

// TestNoRateLimit: without -rate, nothing is limited, and no response says anything of a limit.
func TestNoRateLimit(t *testing.T) {
	url, _, _ := testApp(t, config{})
	for i := range 20 {
		resp, body := do(t, "POST", url+"/todos", `{"title":"x"}`, jsonType)
		if resp.StatusCode != 201 || resp.Header.Get("RateLimit") != "" || resp.Header.Get("RateLimit-Policy") != "" {
			t.Fatalf("write %d: %d %q %q", i+1, resp.StatusCode, resp.Header, body)
		}
	}
}

// from returns a client whose connections come from the loopback address ip: on Linux all of
// 127.0.0.0/8 is the loopback, so each address is a client of its own to the server.
func from(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableCompression: true}}
}

// TestCommandRateLimit: the command with -rate 2. An address's third write within half a second
// of its first is refused (429, JSON, Retry-After, RateLimit), and another address's is not.
// Then 100,000 addresses make a write each, and the server's live heap does not grow with
// them: the limiter keeps its keys in a table of fixed size, allocated at start, as
// middleware.RateLimit says (17 bytes a key: 100,000 keys kept would be 1.7 MB at the least).
func TestCommandRateLimit(t *testing.T) {
	p := startProcess(t, t.TempDir(), "-rate", "2", "-loops", "2")
	addr := strings.TrimPrefix(p.line, "listening http://")
	base := "http://" + addr
	write := func(c *http.Client) (*http.Response, string) {
		t.Helper()
		resp, err := c.Post(base+"/todos", "application/json", strings.NewReader(`{"title":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	// The third write is refused if it comes within 500 ms of the first, as the server counts.
	// The server sees the first after the client sent it and the third before the client has
	// the answer: when that span was shorter than 500 ms, the third must have been refused.
	// On a machine too loaded for three requests in 500 ms, the attempt proves nothing, and
	// another address tries again.
	for i := 1; ; i++ {
		c := from(fmt.Sprintf("127.0.1.%d", i))
		start := time.Now()
		for j := range 2 {
			if resp, body := write(c); resp.StatusCode != 201 {
				t.Fatalf("address %d, write %d: %d %q", i, j+1, resp.StatusCode, body)
			}
		}
		resp, body := write(c)
		if took := time.Since(start); resp.StatusCode == 429 {
			checkRefused(t, resp, body, 2)
			break
		} else if took < 500*time.Millisecond {
			t.Fatalf("three writes within %v: the third answered %d %q", took, resp.StatusCode, body)
		} else {
			t.Logf("three writes took %v: another address tries again", took)
		}
	}
	if resp, body := write(from("127.0.2.1")); resp.StatusCode != 201 {
		t.Fatalf("another address, right after a refusal: %d %q", resp.StatusCode, body)
	}

	if testing.Short() {
		t.Skip("100,000 addresses take a while: not with -short")
	}
	before := liveHeap(t, base, "127.0.3.1")
	const clients = 100_000
	var refused, next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < clients; i = next.Add(1) - 1 {
				ip := netip.AddrFrom4([4]byte{127, 10 + byte(i>>16), byte(i >> 8), byte(i)})
				if status := rawWrite(addr, ip); status == "429" {
					refused.Add(1)
				} else if status != "404" {
					t.Errorf("%v: %q", ip, status)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	after := liveHeap(t, base, "127.0.3.2")
	t.Logf("live heap %d bytes before %d addresses, %d after", before, clients, after)
	if refused.Load() != 0 {
		t.Errorf("%d of %d new addresses refused", refused.Load(), clients)
	}
	if grown := after - before; grown > 1<<20 {
		t.Errorf("the live heap grew by %d bytes with %d addresses: the limiter keeps them", grown, clients)
	}
}

// rawWrite sends, from ip, a write the limiter counts and the server answers without the
// database (DELETE /todos/0: no such todo, 404), and returns the status the server answered.
func rawWrite(addr string, ip netip.Addr) string {
	d := &net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip, 0))}
	conn, err := d.DialContext(context.Background(), "tcp", addr)
	if err != nil {
		return err.Error()
	}
	defer conn.Close()
	io.WriteString(conn, "DELETE /todos/0 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
	line, err := bufio.NewReader(conn).ReadString('\n')
	if status, ok := strings.CutPrefix(line, "HTTP/1.1 "); ok && len(status) >= 3 {
		return status[:3]
	}
	return fmt.Sprintf("%q %v", line, err)
}

// liveHeap returns the bytes of the server's heap that its last garbage collection found live
// (go_gc_heap_live_bytes), after asking it for two collections (the profiler's heap profile with
// gc=1): the second frees what pools kept through the first. The profiler's requests count
// against the limit (they take the token when there is one): they come from ip, and spend its
// burst of two.
func liveHeap(t *testing.T, base, ip string) int64 {
	t.Helper()
	c := from(ip)
	for range 2 {
		resp, err := c.Get(base + "/debug/pprof/heap?gc=1")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("/debug/pprof/heap: %d", resp.StatusCode)
		}
	}
	live := value(scrape(t, base), "go_gc_heap_live_bytes")
	if live <= 0 {
		t.Fatal("no go_gc_heap_live_bytes in /metrics")
	}
	return int64(live)
}
