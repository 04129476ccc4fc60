package main

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/dwellhttp/dwell/core/coretest"
)

// TestCommandRedirect: with -cert, -key and -redirect ADDR, the command listens on ADDR too,
// one server with two listeners, and says so in its second line ("redirecting http://ADDR", as
// examples/autocert does): every plain request there is redirected to the same URL on
// the HTTPS address (301 for a GET, 308 for a POST, which keeps its method), which serves it;
// SIGTERM stops both.
func TestCommandRedirect(t *testing.T) {
	crt := coretest.NewCertificate(t)
	p := startProcess(t, t.TempDir(), "-cert", crt.CertFile, "-key", crt.KeyFile, "-redirect", "127.0.0.1:0")
	httpsAddr, ok := strings.CutPrefix(p.line, "listening https://")
	if !ok {
		t.Fatalf("first line %q; stderr: %s", p.line, p.stderr)
	}
	second, _ := p.out.ReadString('\n')
	plainAddr, ok := strings.CutPrefix(strings.TrimSpace(second), "redirecting http://")
	if !ok {
		t.Fatalf("second line %q", second)
	}
	_, httpsPort, _ := net.SplitHostPort(httpsAddr)
	_, plainPort, _ := net.SplitHostPort(plainAddr)

	plain := &http.Client{Timeout: coretest.Patience, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		method string
		code   int
	}{{"GET", 301}, {"POST", 308}} {
		req, _ := http.NewRequest(tc.method, "http://localhost:"+plainPort+"/todos?x=1", strings.NewReader(`{"title":"t"}`))
		resp, err := plain.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := "https://localhost:" + httpsPort + "/todos?x=1"; resp.StatusCode != tc.code || resp.Header.Get("Location") != want {
			t.Fatalf("%s on the plain port: %d %q, want %d %q", tc.method, resp.StatusCode, resp.Header.Get("Location"), tc.code, want)
		}
	}
	// The redirect's target serves: the client follows it over TLS.
	follow := &http.Client{Timeout: coretest.Patience, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: crt.Pool}}}
	resp, err := follow.Get("http://localhost:" + plainPort + "/todos")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil || strings.TrimSpace(string(body)) != "[]" {
		t.Fatalf("GET /todos by the redirect: %d, TLS %v, %q", resp.StatusCode, resp.TLS != nil, body)
	}

	syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	coretest.Receive(t, "the exit after SIGTERM", p.exited)
	if p.err != nil {
		t.Fatalf("after SIGTERM: %v; stderr: %s", p.err, p.stderr)
	}
	for _, addr := range []string{httpsAddr, plainAddr} {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after the exit", addr)
		}
	}
}

// TestCommandRedirectNeedsTLS: -redirect without -cert is an error: there is no HTTPS address
// to redirect to.
func TestCommandRedirectNeedsTLS(t *testing.T) {
	p := startProcess(t, t.TempDir(), "-redirect", "127.0.0.1:0")
	coretest.Receive(t, "the exit", p.exited)
	if p.line != "" || p.err == nil || !strings.Contains(p.stderr.String(), "-redirect needs -cert") {
		t.Errorf("printed %q, exited with %v, said %q", p.line, p.err, p.stderr)
	}
}
