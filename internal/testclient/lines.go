package testclient

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// NotHTTP1Lines are lines that name no HTTP/1.x version: no HTTP/1.x client sends them, and a port that speaks h2c
// with prior knowledge may take them for a damaged HTTP/2 preface.
var NotHTTP1Lines = []struct{ Name, Raw string }{
	{"invalid connection preface", "INVALID CONNECTION PREFACE\r\n\r\n"},
	{"three words", "HELLO THERE FRIEND\r\nHost: h\r\n\r\n"},
	{"HTTP/1. only in a field", "GET / VERSION\r\nX: HTTP/1.1\r\n\r\n"},
}

// Expect400 sends raw and expects a 400 giving reason, with Connection: close, and then the end.
func Expect400(t testing.TB, c net.Conn, r *bufio.Reader, raw, reason string) {
	t.Helper()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(Patience))
	resp, err := http.ReadResponse(r, &http.Request{Method: "GET"})
	if err != nil {
		t.Fatalf("%q: no response: %v", raw, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%q: reading the body: %v", raw, err)
	}
	if resp.StatusCode != 400 || !strings.Contains(string(body), reason) || !resp.Close {
		t.Fatalf("%q: %d %q (close %v), want 400 saying %q, and the close", raw, resp.StatusCode, body, resp.Close, reason)
	}
	if b, err := r.ReadByte(); err == nil {
		t.Fatalf("%q: %q after the 400", raw, b)
	}
}

// ExpectSilentClose sends raw and expects the connection closed with nothing written.
func ExpectSilentClose(t testing.TB, c net.Conn, r *bufio.Reader, raw string) {
	t.Helper()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(Patience))
	b, err := r.ReadByte()
	if err == nil {
		rest, _ := r.Peek(r.Buffered())
		t.Fatalf("%q: answered %q%q; want the close and nothing else", raw, b, rest)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("%q: connection still open after %v", raw, Patience)
	}
}
