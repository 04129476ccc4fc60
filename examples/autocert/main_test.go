package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/coretest"
)

// Let's Encrypt cannot be reached from the tests: they check the wiring, with the cache seeded
// as autocert leaves it once a certificate has been issued (DirCache's files: "NAME" holds the
// key and certificate of NAME, "NAME+token" the certificate of a TLS-ALPN-01 challenge under
// way, "TOKEN+http-01" the answer to an HTTP-01 one), so that no handshake here asks for a
// certificate.

// seedCert writes a self-signed certificate for name (ECDSA P-256, valid for a year: autocert
// renews only within 30 days of the end) with its key under key in the cache dir, and returns
// a pool that trusts it.
func seedCert(t *testing.T, dir, key, name string) *x509.CertPool {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: key},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{name},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	data := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	data = append(data, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	if err := os.WriteFile(filepath.Join(dir, key), data, 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

// site is the program's server, started in the test process on loopback ports for
// example.test and www.example.test, with a cache that has example.test's certificate, a
// TLS-ALPN-01 challenge certificate for it, and one HTTP-01 token.
type site struct {
	s         *service
	https     string // host:port
	plain     string
	httpsPort string
	pool      *x509.CertPool // trusts example.test's certificate
	tokenPool *x509.CertPool // trusts its challenge certificate
}

const token, keyAuth = "tok-123_abc", "tok-123_abc.thumbprint"

func startSite(t *testing.T) *site {
	t.Helper()
	dir := t.TempDir()
	st := &site{
		pool:      seedCert(t, dir, "example.test", "example.test"),
		tokenPool: seedCert(t, dir, "example.test+token", "example.test"),
	}
	if err := os.WriteFile(filepath.Join(dir, token+"+http-01"), []byte(keyAuth), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := listen(config{
		domains: []string{"example.test", "www.example.test"},
		cache:   dir,
		addr:    "127.0.0.1:0", httpAddr: "127.0.0.1:0",
		loops: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.shutdown(ctx)
		if err := <-errc; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	addrs := s.srv.Addrs()
	st.s, st.https, st.plain = s, addrs[0].String(), addrs[1].String()
	_, st.httpsPort, _ = net.SplitHostPort(st.https)
	return st
}

// dialTo is a DialContext that connects to addr whatever the URL's host is: example.test is
// this process.
func dialTo(addr string) func(ctx context.Context, network, _ string) (net.Conn, error) {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
}

// handshake makes a TLS handshake with the HTTPS server for the name with ALPN protos.
func (st *site) handshake(name string, pool *x509.CertPool, protos ...string) (tls.ConnectionState, error) {
	d := &tls.Dialer{Config: &tls.Config{ServerName: name, RootCAs: pool, NextProtos: protos}}
	ctx, cancel := context.WithTimeout(context.Background(), coretest.Patience)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", st.https)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer c.Close()
	return c.(*tls.Conn).ConnectionState(), nil
}

// TestHTTPS: a client that trusts example.test's certificate gets the page over TLS, as
// HTTP/2, which it offers: the certificate comes from the Manager's cache.
func TestHTTPS(t *testing.T) {
	st := startSite(t)
	client := &http.Client{Timeout: coretest.Patience, Transport: &http.Transport{
		DialContext:       dialTo(st.https),
		TLSClientConfig:   &tls.Config{RootCAs: st.pool},
		ForceAttemptHTTP2: true,
	}}
	resp, err := client.Get("https://example.test:" + st.httpsPort + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "Hello over https, TLS 1.3, for example.test\n" ||
		resp.Proto != "HTTP/2.0" || resp.TLS.NegotiatedProtocol != "h2" ||
		resp.Header.Get("Strict-Transport-Security") == "" {
		t.Errorf("GET /: %s %d %q %q", resp.Proto, resp.StatusCode, body, resp.Header)
	}
}

// TestTLSALPN01: a handshake that offers only acme-tls/1, as Let's Encrypt's TLS-ALPN-01
// validation does, negotiates it (dwell keeps the protocol from Manager.TLSConfig's NextProtos,
// dropping only h2) and gets the challenge's certificate rather than the site's.
func TestTLSALPN01(t *testing.T) {
	st := startSite(t)
	cs, err := st.handshake("example.test", st.tokenPool, "acme-tls/1")
	if err != nil {
		t.Fatal(err)
	}
	if cs.NegotiatedProtocol != "acme-tls/1" || cs.PeerCertificates[0].Subject.CommonName != "example.test+token" {
		t.Errorf("acme-tls/1 handshake: ALPN %q, certificate %q", cs.NegotiatedProtocol, cs.PeerCertificates[0].Subject)
	}
}

// TestUnknownName: the Manager's HostPolicy allows the -domain names only; a handshake for
// another name, for none, or for a challenge that is not under way fails at once with an
// alert — nothing is asked of Let's Encrypt — and the server serves on.
func TestUnknownName(t *testing.T) {
	st := startSite(t)
	ctx := context.Background()
	for _, name := range []string{"example.test", "www.example.test"} {
		if err := st.s.manager.HostPolicy(ctx, name); err != nil {
			t.Errorf("HostPolicy(%q): %v", name, err)
		}
	}
	for _, name := range []string{"unknown.test", "example.test.evil", "test", ""} {
		if err := st.s.manager.HostPolicy(ctx, name); err == nil {
			t.Errorf("HostPolicy(%q) allows it", name)
		}
	}
	for _, tc := range []struct {
		what, name string
		protos     []string
	}{
		{"an unknown name", "unknown.test", []string{"http/1.1"}},
		{"no name", "", nil},
		{"a challenge not under way", "www.example.test", []string{"acme-tls/1"}},
	} {
		cfg := &tls.Config{ServerName: tc.name, NextProtos: tc.protos, RootCAs: st.pool}
		if tc.name == "" {
			cfg.InsecureSkipVerify = true // no name to verify: the server refuses anyway
		}
		d := &tls.Dialer{Config: cfg}
		c, err := d.DialContext(ctx, "tcp", st.https)
		if err == nil {
			c.Close()
			t.Errorf("%s: handshake succeeded", tc.what)
		} else if !strings.Contains(err.Error(), "remote error: tls: internal error") {
			t.Errorf("%s: %v, want the server's alert", tc.what, err)
		}
	}
	if _, err := st.handshake("example.test", st.pool, "http/1.1"); err != nil {
		t.Errorf("example.test after the refusals: %v", err)
	}
}

// TestPlainListener: the plain server answers HTTP-01 challenges with autocert's handler,
// through the net/http bridge — the token's key authorization, 404 for an unknown token, 403
// for a name the policy refuses — and sends everything else to the HTTPS port.
func TestPlainListener(t *testing.T) {
	st := startSite(t)
	client := &http.Client{
		Timeout:       coretest.Patience,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	for _, tc := range []struct {
		method, host, path string
		status             int
		location, body     string
	}{
		{"GET", "example.test", "/.well-known/acme-challenge/" + token, 200, "", keyAuth},
		{"GET", "www.example.test", "/.well-known/acme-challenge/" + token, 200, "", keyAuth},
		{"GET", "example.test", "/.well-known/acme-challenge/other", 404, "", ""},
		{"GET", "unknown.test", "/.well-known/acme-challenge/" + token, 403, "", ""},
		{"GET", "example.test", "/", 301, "https://example.test:" + st.httpsPort + "/", ""},
		{"GET", "example.test:80", "/a/b?c=d%20e", 301, "https://example.test:" + st.httpsPort + "/a/b?c=d%20e", ""},
		{"HEAD", "www.example.test", "/x", 301, "https://www.example.test:" + st.httpsPort + "/x", ""},
		{"POST", "example.test", "/form", 308, "https://example.test:" + st.httpsPort + "/form", ""},
		{"POST", "example.test", "/.well-known/acme-challenge/" + token, 308,
			"https://example.test:" + st.httpsPort + "/.well-known/acme-challenge/" + token, ""},
	} {
		req, err := http.NewRequest(tc.method, "http://"+st.plain+tc.path, strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = tc.host
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("Location") != tc.location ||
			tc.body != "" && string(body) != tc.body {
			t.Errorf("%s %s%s: %d %q %q, want %d %q %q", tc.method, tc.host, tc.path,
				resp.StatusCode, resp.Header.Get("Location"), body, tc.status, tc.location, tc.body)
		}
	}
}

// TestMain runs the command itself when TestCommand asks for it, with its cache in the
// directory AUTOCERT_RUN_MAIN names and the flags of AUTOCERT_ARGS (space-separated).
func TestMain(m *testing.M) {
	if dir := os.Getenv("AUTOCERT_RUN_MAIN"); dir != "" {
		os.Args = append([]string{"autocert", "-cache", dir, "-addr", "127.0.0.1:0", "-http", "127.0.0.1:0"},
			strings.Fields(os.Getenv("AUTOCERT_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// command runs the program with args and returns what it printed (its first two lines, or
// less when it exits first), its stderr, and a channel that yields how it exited; it is killed,
// by its PID, if it still runs when the test ends.
func command(t *testing.T, dir, args string) (lines []string, cmd *exec.Cmd, exited <-chan error, stderr *coretest.LogBuffer) {
	t.Helper()
	cmd = exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "AUTOCERT_RUN_MAIN="+dir, "AUTOCERT_ARGS="+args)
	stderr = new(coretest.LogBuffer)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	for range 2 {
		line, err := r.ReadString('\n')
		if err != nil {
			break
		}
		lines = append(lines, strings.TrimSpace(line))
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { syscall.Kill(cmd.Process.Pid, syscall.SIGKILL) })
	return lines, cmd, done, stderr
}

// TestCommand: the program says where it listens, serves HTTPS there and redirects from the
// plain address, and stops cleanly on SIGTERM; without -domain it refuses to start.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	pool := seedCert(t, dir, "example.test", "example.test")
	lines, cmd, exited, stderr := command(t, dir, "-domain example.test,www.example.test -loops 2")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "listening https://127.0.0.1:") || !strings.HasPrefix(lines[1], "redirecting http://127.0.0.1:") {
		t.Fatalf("printed %q; stderr: %s", lines, stderr)
	}
	httpsAddr := strings.TrimPrefix(lines[0], "listening https://")
	plainAddr := strings.TrimPrefix(lines[1], "redirecting http://")
	_, port, _ := net.SplitHostPort(httpsAddr)

	client := &http.Client{
		Timeout:       coretest.Patience,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{DialContext: dialTo(httpsAddr), TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	resp, err := client.Get("https://example.test:" + port + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET https://example.test/: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", "http://"+plainAddr+"/x", nil)
	req.Host = "example.test"
	resp, err = http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 301 || resp.Header.Get("Location") != "https://example.test:"+port+"/x" {
		t.Errorf("GET http://example.test/x: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	cmd.Process.Signal(syscall.SIGTERM)
	if err := coretest.Receive(t, "the exit after SIGTERM", exited); err != nil {
		t.Errorf("after SIGTERM: %v; stderr: %s", err, stderr)
	}

	lines, _, exited, stderr = command(t, t.TempDir(), "")
	if err := coretest.Receive(t, "the exit without -domain", exited); len(lines) != 0 || err == nil || !strings.Contains(stderr.String(), "-domain") {
		t.Errorf("without -domain: printed %q, exited with %v, said %q", lines, err, stderr)
	}
}
