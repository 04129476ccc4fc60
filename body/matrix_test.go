package body_test

import (
	"crypto/sha256"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// matrixHandler reads the body as the path says and reports what it got:
//
//	/fast    64 KiB reads
//	/slow    997-byte reads, parking a little every few reads, so the client gets ahead
//	/ignore  no read at all: the server must skip the body, never parse it as a request
func matrixHandler(t *testing.T) core.Handler {
	return func(c *core.Ctx) {
		size, pause := 64<<10, false
		switch c.Path() {
		case "/ignore":
			c.WriteString("ignored")
			return
		case "/slow":
			size, pause = 997, true
		}
		buf := make([]byte, size)
		h := sha256.New()
		n := 0
		for reads := 1; ; reads++ {
			k, err := c.ReadBody(buf)
			h.Write(buf[:k])
			n += k
			if err != nil {
				if err != io.EOF {
					t.Errorf("%s: read error %v after %d bytes", c.Path(), err, n)
					return
				}
				break
			}
			if pause && reads%4 == 0 {
				c.Suspend(200 * time.Microsecond)
			}
		}
		fmt.Fprintf(c, "n=%d sha=%x trailer=%s", n, h.Sum(nil)[:6], c.Trailer("X-Check"))
	}
}

// TestBodyMatrix reads bodies across {Content-Length, chunked} × {keep-alive, pipelined} ×
// {fast reader, slow reader, byte-at-a-time writer}. Each connection carries a read body, an
// ignored one and an empty one, and must stay open throughout.
func TestBodyMatrix(t *testing.T) {
	_, addr := coretest.Serve(t, matrixHandler(t), core.Options{})
	for _, isChunked := range []bool{false, true} {
		for _, pipelined := range []bool{false, true} {
			for _, pace := range []string{"fast", "slow", "bytewise"} {
				name := fmt.Sprintf("chunked=%v/pipelined=%v/%s", isChunked, pipelined, pace)
				t.Run(name, func(t *testing.T) {
					runMatrixCase(t, addr, isChunked, pipelined, pace)
				})
			}
		}
	}
}

func runMatrixCase(t *testing.T, addr string, isChunked, pipelined bool, pace string) {
	sizes := []int{150_000, 100_000, 0}
	reader := "/fast"
	switch pace {
	case "slow":
		reader = "/slow"
	case "bytewise":
		sizes = []int{1500, 700, 0}
	}
	paths := []string{reader, "/ignore", reader}
	var reqs, wants []string
	for i, n := range sizes {
		b := payload(n, byte(i))
		reqs = append(reqs, post(paths[i], b, isChunked, ""))
		want := "ignored"
		if paths[i] != "/ignore" {
			trailer := ""
			if isChunked {
				trailer = digest(b)
			}
			want = digest(b) + " trailer=" + trailer
		}
		wants = append(wants, want)
	}
	c := dial(t, addr)
	bytewise := pace == "bytewise"
	check := func(i int) {
		t.Helper()
		resp, got := c.Response("POST")
		if got != wants[i] || resp.StatusCode != 200 || resp.Close {
			t.Fatalf("request %d: %d %q (close %v), want %q", i, resp.StatusCode, got, resp.Close, wants[i])
		}
	}
	if pipelined {
		all := ""
		for _, r := range reqs {
			all += r
		}
		go func() { // the server may answer before it has everything
			if err := c.write(all, bytewise); err != nil {
				t.Error(err)
			}
		}()
		for i := range reqs {
			check(i)
		}
	} else {
		for i, r := range reqs {
			if err := c.write(r, bytewise); err != nil {
				t.Fatal(err)
			}
			check(i)
		}
	}
	// The connection is still usable, and no stray response is pending.
	c.Send("GET /ignore HTTP/1.1\r\nHost: h\r\n\r\n")
	if _, got := c.Response("GET"); got != "ignored" {
		t.Fatalf("after the bodies: %q", got)
	}
}
