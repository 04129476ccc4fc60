package nethttp

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
)

// h2cClient is net/http's own client speaking HTTP/2 with prior knowledge.
func h2cClient(t *testing.T) *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// TestH2Request: over HTTP/2 a net/http handler sees ProtoMajor 2, reads a body that has no
// length as it arrives, and its trailers reach the client.
func TestH2Request(t *testing.T) {
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("body: %v", err)
		}
		w.Header().Set("Trailer", "X-Declared")
		w.Header().Set("X-Proto", fmt.Sprintf("%s %d.%d %d", r.Proto, r.ProtoMajor, r.ProtoMinor, r.ContentLength))
		w.WriteHeader(200)
		w.Write(b)
		w.Header().Set("X-Declared", "late")
		w.Header().Set(http.TrailerPrefix+"X-Prefixed", "yes")
	}, core.Options{})
	c := h2cClient(t)
	body := io.MultiReader(strings.NewReader("abc"), strings.NewReader("def")) // no length known
	resp, err := c.Post("http://"+addr+"/", "text/plain", body)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || string(got) != "abcdef" {
		t.Fatalf("%s: %q", resp.Proto, got)
	}
	if p := resp.Header.Get("X-Proto"); p != "HTTP/2.0 2.0 -1" {
		t.Errorf("the handler saw %q", p)
	}
	if resp.Trailer.Get("X-Declared") != "late" || resp.Trailer.Get("X-Prefixed") != "yes" {
		t.Errorf("trailers %v", resp.Trailer)
	}
}

// TestH2FullDuplex: a handler that reads the body on one goroutine while it writes on another
// (gRPC's streams do) gets each line back as it sends it, before the request ends.
func TestH2FullDuplex(t *testing.T) {
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		lines := make(chan string)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(r.Body)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		for line := range lines {
			fmt.Fprintf(w, "echo %s\n", line)
			w.(http.Flusher).Flush()
		}
	}, core.Options{})
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", "http://"+addr+"/", pr)
	c := h2cClient(t)
	respc := make(chan *http.Response, 1)
	go func() {
		resp, err := c.Do(req)
		if err != nil {
			t.Error(err)
			close(respc)
			return
		}
		respc <- resp
	}()
	fmt.Fprintln(pw, "one")
	resp := <-respc
	if resp == nil {
		return
	}
	br := bufio.NewReader(resp.Body)
	for _, want := range []string{"one", "two", "three"} {
		if want != "one" {
			fmt.Fprintln(pw, want)
		}
		line, err := br.ReadString('\n')
		if err != nil || line != "echo "+want+"\n" {
			t.Fatalf("%q, %v; want the echo of %q while the request goes on", line, err, want)
		}
	}
	pw.Close()
	if rest, _ := io.ReadAll(br); len(rest) != 0 {
		t.Errorf("after the request's end: %q", rest)
	}
	resp.Body.Close()
	// The read that waited for each line, between the writes, gave up its place in the pool
	// once, and took it back once.
	waitPoolIdle(t)
}

// TestH2Hijack: Hijack over HTTP/2 answers http.ErrNotSupported, as net/http's does, and the
// handler's response goes on.
func TestH2Hijack(t *testing.T) {
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		_, _, err := http.NewResponseController(w).Hijack()
		fmt.Fprint(w, err == http.ErrNotSupported)
	}, core.Options{})
	resp, err := h2cClient(t).Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || !bytes.Equal(b, []byte("true")) {
		t.Fatalf("%s: %q", resp.Proto, b)
	}
}

// TestTrailersHTTP11: over HTTP/1.1 the trailers follow a chunked body.
func TestTrailersHTTP11(t *testing.T) {
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(http.TrailerPrefix+"Grpc-Status", "0")
		io.WriteString(w, "body")
	}, core.Options{})
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "body" || resp.Trailer.Get("Grpc-Status") != "0" || resp.ContentLength != -1 {
		t.Fatalf("%q, trailers %v, length %d", b, resp.Trailer, resp.ContentLength)
	}
}
