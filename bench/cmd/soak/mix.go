package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// mix runs every kind of client against s for -d, asks s for its statistics, and shuts it down
// under the load.
func mix(s *server) {
	scheme := "http://"
	h1 := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true, ExpectContinueTimeout: time.Second}}
	h2 := &http.Client{Transport: h2cTransport()}
	if *useTLS {
		scheme = "https://"
		// A configuration each: a Transport that speaks HTTP/2 sets the ALPN protocols of its own.
		h1 = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true, ExpectContinueTimeout: time.Second,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		var p http.Protocols
		p.SetHTTP2(true)
		h2 = &http.Client{Transport: &http.Transport{Protocols: &p, DisableCompression: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	}
	base := scheme + s.addr
	t := newTally(s.stopping)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	spawn := func(n int, f func(ctx context.Context, t *tally)) {
		for range n {
			wg.Go(func() {
				for ctx.Err() == nil {
					f(ctx, t)
				}
			})
		}
	}
	spawn(2**scale, func(ctx context.Context, t *tally) { exchange(ctx, t, h1, base, "HTTP/1.1") })
	spawn(2**scale, func(ctx context.Context, t *tally) { exchange(ctx, t, h2, base, "h2") })
	for range *scale {
		spawn(1, (&poller{c: h1, base: base, proto: "HTTP/1.1"}).poll)
		spawn(1, (&poller{c: h2, base: base, proto: "h2"}).poll)
	}
	if !*useTLS {
		spawn(*scale, func(ctx context.Context, t *tally) { pipeline(ctx, t, s.addr) })
		spawn(*scale, func(ctx context.Context, t *tally) { reset(ctx, t, s.addr) })
		spawn(*scale, func(ctx context.Context, t *tally) { echoWebSocket(ctx, t, s.addr) })
	}
	time.Sleep(*dur)
	_, st, err := get(context.Background(), h1, "GET", base+"/stats", nil)
	if err != nil {
		fmt.Println("stats:", err)
	} else {
		fmt.Printf("the server, under load: %s\n", st)
	}
	s.markStopping()
	clean, log := s.stop()
	stop()
	wg.Wait()
	t.print("under load, then through the shutdown")
	fmt.Printf("the server's log:\n%s", log)
	if !clean || t.failures() > 0 {
		fmt.Println("FAIL")
		os.Exit(1)
	}
	fmt.Println("PASS")
}

// h2cTransport speaks HTTP/2 with prior knowledge over plain TCP.
func h2cTransport() *http.Transport {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Transport{Protocols: &p, DisableCompression: true}
}

// get makes a request and reads its response. Half the POSTs ask for 100-continue.
func get(ctx context.Context, c *http.Client, method, url string, body []byte) (*http.Response, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, nil, err
	}
	if method == "POST" && rand.IntN(2) == 0 {
		req.Header.Set("Expect", "100-continue")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// streamed is what the server's /stream?n= sends.
func streamed(n int) []byte {
	out := make([]byte, 0, n*1024)
	for i := range n {
		for j := range 1024 {
			out = append(out, byte('a'+(i+j)%26))
		}
	}
	return out
}

// exchange makes one request of a kind chosen at random, one in ten cancelled within 3 ms, and
// checks its response.
func exchange(ctx context.Context, t *tally, c *http.Client, base, proto string) {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cancelled := rand.IntN(10) == 0
	if cancelled {
		time.AfterFunc(time.Duration(rand.IntN(3000))*time.Microsecond, cancel)
	}
	what, want, status, body, err := request(rctx, c, base)
	switch {
	case err != nil && (cancelled || ctx.Err() != nil):
		t.expect("cancelled")
	case err != nil:
		t.fail(proto+" "+what, err)
	case status != 200:
		t.fail(proto+" "+what, fmt.Errorf("status %d: %.60q", status, body))
	case !bytes.Equal(body, want):
		t.fail(proto+" "+what, fmt.Errorf("%d bytes of body, want %d", len(body), len(want)))
	default:
		t.ok.Add(1)
	}
}

// request makes one request of a kind chosen at random, and returns what it was and the body
// it wants back.
func request(ctx context.Context, c *http.Client, base string) (what string, want []byte, status int, body []byte, err error) {
	var resp *http.Response
	op := rand.IntN(12)
	if *only >= 0 {
		op = *only
	}
	switch op {
	case 0:
		what, want = "hello", []byte("hello")
		resp, body, err = get(ctx, c, "GET", base+"/hello", nil)
	case 1, 2:
		n := rand.IntN(300 << 10)
		if rand.IntN(3) == 0 {
			n = rand.IntN(100)
		}
		want = make([]byte, n)
		for i := range want {
			want[i] = byte(rand.IntN(256))
		}
		path := map[int]string{1: "/echo", 2: "/std/echo"}[op]
		what = "POST " + path + " of " + strconv.Itoa(n)
		resp, body, err = get(ctx, c, "POST", base+path, want)
	case 3, 4:
		n := rand.IntN(400)
		path := map[int]string{3: "/stream", 4: "/std/stream"}[op]
		what, want = path+" of "+strconv.Itoa(n)+" KiB", streamed(n)
		resp, body, err = get(ctx, c, "GET", base+path+"?n="+strconv.Itoa(n), nil)
	case 5:
		what, want = "do", []byte("done")
		resp, body, err = get(ctx, c, "GET", base+"/do?ms="+strconv.Itoa(rand.IntN(20)), nil)
	case 6:
		what, want = "call", []byte("called")
		resp, body, err = get(ctx, c, "GET", base+"/call", nil)
	case 7:
		what, want = "std hello", []byte("hello")
		resp, body, err = get(ctx, c, "GET", base+"/std/hello", nil)
	case 8:
		what, want = "sleep", []byte("slept")
		resp, body, err = get(ctx, c, "GET", base+"/sleep?ms="+strconv.Itoa(rand.IntN(30)), nil)
	case 9:
		what, want = "detach", []byte("detached")
		resp, body, err = get(ctx, c, "GET", base+"/detach?ms="+strconv.Itoa(1+rand.IntN(20)), nil) // 0: no deadline
	case 10:
		n := 1000 + rand.IntN(3000)
		what, want = "a slow reader of /stream of "+strconv.Itoa(n)+" KiB", streamed(n)
		resp, body, err = slowGet(ctx, c, base+"/stream?n="+strconv.Itoa(n))
	case 11:
		what, want = "a range of /file", make([]byte, 90)
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/file", nil)
		req.Header.Set("Range", "bytes=10-99")
		if resp, err = c.Do(req); err == nil {
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode != 206 {
				err = fmt.Errorf("status %d, want 206", resp.StatusCode)
			}
			resp.StatusCode = 200
		}
	}
	if resp != nil {
		status = resp.StatusCode
	}
	return what, want, status, body, err
}

// slowGet reads a response now and then pausing for a millisecond, so that the server's output
// waits for it.
func slowGet(ctx context.Context, c *http.Client, url string) (*http.Response, []byte, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	var body []byte
	buf := make([]byte, 16<<10)
	for {
		n, err := resp.Body.Read(buf)
		body = append(body, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return resp, body, nil
		}
		if err != nil {
			return resp, body, err
		}
		if rand.IntN(20) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}
