package nethttp

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// hashBody answers with the size and SHA-256 of the body, read through reads of the size in
// the "read" query parameter, pausing after each "pause" bytes when that is set.
func hashBody(w http.ResponseWriter, r *http.Request) {
	var size int
	fmt.Sscan(r.URL.Query().Get("read"), &size)
	pause := 0
	fmt.Sscan(r.URL.Query().Get("pause"), &pause)
	h := sha256.New()
	buf := make([]byte, size)
	var n, sincePause int
	for {
		k, err := r.Body.Read(buf)
		h.Write(buf[:k])
		n += k
		if sincePause += k; pause > 0 && sincePause >= pause {
			time.Sleep(time.Millisecond) // a handler slower than its client
			sincePause = 0
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
	}
	fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
}

// TestBodyStreams: bodies of every size and framing reach the handler whole, through reads of
// any size, by a handler faster or slower than its client.
func TestBodyStreams(t *testing.T) {
	_, addr := serveStd(t, hashBody, core.Options{})
	cl := coretest.Dial(t, addr)
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(i * 7 / 3)
	}
	for _, size := range []int{1, 100, 4095, 4096, 70000, 3 << 20} {
		sum := sha256.Sum256(data[:size])
		want := fmt.Sprintf("%d %s", size, hex.EncodeToString(sum[:]))
		for _, read := range []int{1, 1000, 4096, 32 << 10} {
			if size > 100000 && read < 1000 {
				continue
			}
			for _, chunked := range []bool{false, true} {
				pause := 0
				if size > 100000 {
					pause = 256 << 10
				}
				target := fmt.Sprintf("/?read=%d&pause=%d", read, pause)
				if chunked {
					cl.Send("POST " + target + " HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
					for off := 0; off < size; off += 50000 {
						part := data[off:min(size, off+50000)]
						cl.Send(fmt.Sprintf("%x\r\n%s\r\n", len(part), part))
					}
					cl.Send("0\r\n\r\n")
				} else {
					cl.Send(fmt.Sprintf("POST %s HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%s", target,
						size, data[:size]))
				}
				if _, body := cl.Response("POST"); body != want {
					t.Errorf("size %d, reads of %d, chunked %v: %q, want %q", size, read, chunked, body, want)
				}
			}
		}
	}
}

// TestBodyTrailer: the trailer fields of a chunked body are in r.Trailer once the body has been
// read to io.EOF; the fields it announced are there, empty, before.
func TestBodyTrailer(t *testing.T) {
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		before := fmt.Sprint(r.Trailer)
		b, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s|%s|%v|%s|%s|%q", before, b, err, r.Trailer.Get("X-Sum"), r.Trailer.Get("X-Other"), r.Header["Trailer"])
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n" +
		"3\r\nabc\r\n2\r\nde\r\n0\r\nx-sum: 42\r\nX-Other: o\r\n\r\n")
	// The Trailer field is in r.Trailer's keys, not in r.Header, as net/http has it.
	if _, body := cl.Response("POST"); body != "map[X-Sum:[]]|abcde|<nil>|42|o|[]" {
		t.Errorf("got %q", body)
	}
}

// TestBodyExpectContinue: a client that expects 100-continue gets it on the handler's first
// Read, and not at all from a handler that answers without reading.
func TestBodyExpectContinue(t *testing.T) {
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/refuse" {
			http.Error(w, "too big", http.StatusRequestEntityTooLarge)
			return
		}
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "got %s", b)
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("POST /read HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
	if resp, _ := cl.Response("POST"); resp.StatusCode != 100 {
		t.Fatalf("status %d, want 100 Continue", resp.StatusCode)
	}
	cl.Send("hello")
	if resp, body := cl.Response("POST"); resp.StatusCode != 200 || body != "got hello" {
		t.Errorf("after 100: %d %q", resp.StatusCode, body)
	}
	cr := coretest.Dial(t, addr)
	cr.Send("POST /refuse HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
	if resp, _ := cr.Response("POST"); resp.StatusCode != 413 {
		t.Errorf("refused: status %d, want the 413 without a 100 Continue", resp.StatusCode)
	}
}

// TestBodyErrors: a body cut short by its client, a body over the server's limit and a read
// after Close each end the handler's reads with the error net/http would give.
func TestBodyErrors(t *testing.T) {
	errs := make(chan error, 1)
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			r.Body.Close()
			_, err := r.Body.Read(make([]byte, 10))
			errs <- err
			return
		}
		_, err := io.ReadAll(r.Body)
		errs <- err
	}, core.Options{MaxBodyBytes: 1000})
	cl := coretest.Dial(t, addr)
	cl.Send("POST /cut HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nonly this")
	cl.CloseWrite()
	if err := <-errs; err != io.ErrUnexpectedEOF {
		t.Errorf("body cut short: %v", err)
	}
	cl = coretest.Dial(t, addr)
	cl.Send("POST /big HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n" + strings.Repeat("x", 1024) + "\r\n")
	if err := <-errs; !errors.Is(err, core.ErrBodyTooLarge) {
		t.Errorf("body over the limit: %v", err)
	}
	if resp, _ := cl.Response("POST"); resp.StatusCode != 413 {
		t.Errorf("body over the limit: status %d", resp.StatusCode)
	}
	cl = coretest.Dial(t, addr)
	cl.Send("POST /close HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello")
	if err := <-errs; err != http.ErrBodyReadAfterClose {
		t.Errorf("read after Close: %v", err)
	}
}

// TestBodyFullDuplex: the handler echoes each piece of the body as it arrives, flushing, while
// the client sends the next piece only once it has the echo of the last: the body and the
// response stream at once, neither held whole.
func TestBodyFullDuplex(t *testing.T) {
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 100)
		for {
			n, err := r.Body.Read(buf)
			w.Write(buf[:n])
			w.(http.Flusher).Flush()
			if err != nil {
				return
			}
		}
	}, core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
	var resp *http.Response
	for i := range 20 {
		piece := fmt.Sprintf("piece %02d;", i)
		cl.Send(fmt.Sprintf("%x\r\n%s\r\n", len(piece), piece))
		if resp == nil {
			var err error
			if resp, err = http.ReadResponse(cl.R, nil); err != nil {
				t.Fatal(err)
			}
		}
		got := make([]byte, len(piece))
		if _, err := io.ReadFull(resp.Body, got); err != nil || string(got) != piece {
			t.Fatalf("echo of %q: %q %v", piece, got, err)
		}
	}
	cl.Send("0\r\n\r\n")
	if rest, err := io.ReadAll(resp.Body); err != nil || len(rest) != 0 {
		t.Errorf("end: %q %v", rest, err)
	}
}
