package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/dwellhttp/dwell/bench/internal/peer"
)

// TestMain lets the test binary be the attacker h2-abuse starts (os.Executable h2-attack ...),
// as the load tool is in a real run.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "h2-attack" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestQuantile checks the nearest-rank percentiles the normal client reports.
func TestQuantile(t *testing.T) {
	var lats []time.Duration
	for i := 1; i <= 1000; i++ {
		lats = append(lats, time.Duration(i)*time.Microsecond)
	}
	for q, want := range map[float64]float64{0.5: 500, 0.99: 990, 0.999: 999, 1: 1000, 0: 1} {
		if got := quantile(lats, q); got != want {
			t.Errorf("q%v = %v, want %v", q, got, want)
		}
	}
	if got := quantile(lats[:10], 0.99); got != 10 {
		t.Errorf("p99 of 10 = %v, want the largest", got)
	}
	if got := quantile(nil, 0.99); got != 0 {
		t.Errorf("p99 of none = %v", got)
	}
}

// TestNormalClient: the normal client's answers over h2 from net/http, a reset that fails a
// request, and a GOAWAY that still lets the request's answer come.
func TestNormalClient(t *testing.T) {
	addr, cert := h2Server(t, true, 0)
	var tf tlsFlags
	tf.on, tf.cert, tf.curves = true, cert, "x25519"
	cfg, scheme, err := h2TLS(&tf)
	if err != nil {
		t.Fatal(err)
	}
	n := &normalClient{addr: addr, path: "/hello", scheme: scheme, cfg: cfg, timeout: 5 * time.Second}
	if err := n.connect(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if lat, err := n.get(); err != nil || lat <= 0 {
			t.Fatalf("request %d: %v, %v", i, lat, err)
		}
	}
	if !strings.HasSuffix(n.res.Negotiated, ", h2") {
		t.Errorf("negotiated %q", n.res.Negotiated)
	}
	n.h.c.Close()

	answer := func(fr *http2.Framer, id uint32) {
		var hb bytes.Buffer
		hpack.NewEncoder(&hb).WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true})
		fr.WriteData(id, true, []byte("Hello World"))
	}
	fake, _ := fakeServer(t, func(i int, c net.Conn, fr *http2.Framer) {
		fr.WriteSettings()
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
				fr.WriteSettingsAck() // the client waits for it before its first request
			}
			hf, ok := f.(*http2.HeadersFrame)
			if !ok {
				continue
			}
			switch hf.StreamID {
			case 1:
				answer(fr, 1)
			case 3:
				fr.WriteRSTStream(3, http2.ErrCodeRefusedStream)
			case 5:
				fr.WriteGoAway(5, http2.ErrCodeNo, nil)
				answer(fr, 5)
			}
		}
	})
	n = &normalClient{addr: fake, path: "/hello", scheme: "http", timeout: 5 * time.Second}
	if err := n.connect(); err != nil {
		t.Fatal(err)
	}
	if _, err := n.get(); err != nil {
		t.Fatalf("stream 1: %v", err)
	}
	if _, err := n.get(); err == nil || !strings.Contains(err.Error(), "REFUSED_STREAM") {
		t.Fatalf("stream 3: %v", err)
	}
	if lat, err := n.get(); !errors.Is(err, errGoingAway) || lat <= 0 {
		t.Fatalf("stream 5: %v, %v", lat, err)
	}
}

// TestH2Abuse runs h2-abuse briefly against net/http over TLS: the attacker is a child process
// (this test binary, through TestMain), and every request of the normal client is accounted
// for, answered or failed.
func TestH2Abuse(t *testing.T) {
	addr, cert := h2Server(t, true, 0)
	for _, attack := range []string{attackReset, attackWindowUpdate, attackZeroWindow, attackTinyWindow} {
		v, err := runH2Abuse(context.Background(), []string{"-addr", addr, "-pid", strconv.Itoa(os.Getpid()),
			"-attack", attack, "-d", "300ms", "-conns", "2", "-streams", "5", "-tls", "-cert", cert})
		if err != nil {
			t.Fatalf("%s: %v", attack, err)
		}
		res := v.(*h2AbuseResult)
		nr := res.Normal
		if res.Attacker == nil || res.Attacker.Attack != attack || nr.Answered+nr.Failed != nr.Sent || nr.PaceUs != 2000 ||
			res.RSSBefore <= 0 || res.Samples == 0 || res.Attacker.Held > res.Attacker.Opened {
			t.Errorf("%s: %+v, normal %+v, attacker %+v", attack, res, nr, res.Attacker)
			continue
		}
		// On 1-byte windows net/http sends each answer of 11 bytes a byte a frame (and may end
		// a stream with an empty one).
		if a := res.Attacker; attack == attackTinyWindow &&
			(a.Ended == 0 || a.DataBytes < int64(len(peer.Hello))*a.Ended || a.DataBytes > a.DataFrames) {
			t.Errorf("tiny-window: %d streams answered whole, %d DATA frames, %d bytes", a.Ended, a.DataFrames, a.DataBytes)
		}
	}
}
