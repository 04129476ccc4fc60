package interop

import (
	"crypto/tls"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// sClient runs openssl s_client against 127.0.0.1:port, verifying the server's certificate
// with the test's CA, with args added, and sends one request for /info that closes the
// connection; -ign_eof keeps it reading until the server has answered and closed. It returns
// what s_client printed and how it exited.
func sClient(t *testing.T, p *tlsPKI, port string, args ...string) (string, error) {
	t.Helper()
	host := "localhost"
	for i, a := range args {
		if a == "-servername" && i+1 < len(args) {
			host = args[i+1]
		}
	}
	req := "GET /info HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n"
	all := append([]string{"s_client", "-connect", "127.0.0.1:" + port, "-CAfile", p.caFile,
		"-verify_return_error", "-ign_eof"}, args...)
	return runTool(t, req, tool(t, "openssl"), all...)
}

// answered reports whether s_client's output holds the server's 200 and tlsInfo's line, and
// returns the line.
func answered(out string) (string, bool) {
	if !strings.Contains(out, "HTTP/1.1 200 OK") {
		return "", false
	}
	i := strings.Index(out, "proto=HTTP/1.1 scheme=https ")
	if i < 0 {
		return "", false
	}
	line, _, _ := strings.Cut(out[i:], "\n")
	return strings.TrimSpace(line), true
}

// TestOpenSSLVersions: s_client gets TLS 1.2 and TLS 1.3 when it asks for one, and the server
// sees the version it negotiated.
func TestOpenSSLVersions(t *testing.T) {
	p := newTLSPKI(t)
	port := serveTLS(t, &tls.Config{Certificates: []tls.Certificate{p.leaf(t, "localhost")}})
	for _, tc := range []struct{ flag, proto, version string }{
		{"-tls1_2", "TLSv1.2", "TLS 1.2"},
		{"-tls1_3", "TLSv1.3", "TLS 1.3"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			out, err := sClient(t, p, port, tc.flag, "-servername", "localhost", "-verify_hostname", "localhost")
			line, ok := answered(out)
			if err != nil || !ok || !strings.Contains(out, "New, "+tc.proto+", Cipher is ") ||
				!strings.Contains(out, "Protocol  : "+tc.proto) || !strings.Contains(out, "Verify return code: 0 (ok)") ||
				!strings.Contains(line, " version="+tc.version+" alpn= sni=localhost resumed=false ") {
				t.Errorf("s_client %s: %v\n%s", tc.flag, err, out)
			}
		})
	}
}

// TestOpenSSLALPN: the server's ALPN offers h2 then http/1.1, and chooses by its own order. A
// client that offers h2 gets it, and the HTTP/1.1 request s_client then sends is not answered
// as one (RFC 9113 §3.4: a client that chose h2 must begin with HTTP/2's preface); one that
// offers http/1.1 alone gets http/1.1 and is answered; one that offers only a protocol the
// server does not speak is refused with the no_application_protocol alert (RFC 7301 §3.2)
// rather than answered in a protocol it did not ask for; one that offers nothing negotiates
// nothing and is answered. (HTTP/2 itself over TLS: h2_*_test.go.)
func TestOpenSSLALPN(t *testing.T) {
	p := newTLSPKI(t)
	port := serveTLS(t, &tls.Config{Certificates: []tls.Certificate{p.leaf(t, "localhost")}})

	for _, offer := range []string{"h2", "h2,http/1.1"} {
		out, _ := sClient(t, p, port, "-alpn", offer)
		if _, ok := answered(out); ok || !strings.Contains(out, "ALPN protocol: h2") {
			t.Errorf("-alpn %s: an HTTP/1.1 answer, or not h2:\n%s", offer, out)
		}
	}

	out, err := sClient(t, p, port, "-alpn", "http/1.1")
	if line, ok := answered(out); err != nil || !ok || !strings.Contains(out, "ALPN protocol: http/1.1") ||
		!strings.Contains(line, " alpn=http/1.1 ") {
		t.Errorf("-alpn http/1.1: %v\n%s", err, out)
	}

	out, err = sClient(t, p, port, "-alpn", "spdy/3.1")
	if _, ok := answered(out); err == nil || ok || !strings.Contains(out, "alert no application protocol") {
		t.Errorf("-alpn spdy/3.1: %v\n%s", err, out)
	}

	out, err = sClient(t, p, port)
	if line, ok := answered(out); err != nil || !ok || !strings.Contains(out, "No ALPN negotiated") ||
		!strings.Contains(line, " alpn= ") {
		t.Errorf("no -alpn: %v\n%s", err, out)
	}
}

// TestOpenSSLServerName: GetCertificate picks the certificate by the name s_client sends
// (SNI); s_client verifies each for its name, and the handler sees the name. A name the server
// has no certificate for fails the handshake.
func TestOpenSSLServerName(t *testing.T) {
	p := newTLSPKI(t)
	certs := map[string]*tls.Certificate{}
	for _, name := range []string{"a.test", "b.test"} {
		c := p.leaf(t, name)
		certs[name] = &c
	}
	port := serveTLS(t, &tls.Config{GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if c := certs[hello.ServerName]; c != nil {
			return c, nil
		}
		return nil, fmt.Errorf("no certificate for %q", hello.ServerName)
	}})
	for _, name := range []string{"a.test", "b.test", "a.test"} {
		out, err := sClient(t, p, port, "-servername", name, "-verify_hostname", name)
		line, ok := answered(out)
		if err != nil || !ok || !strings.Contains(out, "subject=CN = "+name+"\n") ||
			!strings.Contains(out, "Verify return code: 0 (ok)") || !strings.Contains(line, " sni="+name+" ") {
			t.Errorf("-servername %s: %v\n%s", name, err, out)
		}
	}
	// The other certificate does not pass for the name.
	out, err := sClient(t, p, port, "-servername", "a.test", "-verify_hostname", "b.test")
	if _, ok := answered(out); err == nil || ok || !strings.Contains(out, "hostname mismatch") {
		t.Errorf("a.test's certificate checked for b.test: %v\n%s", err, out)
	}
	out, err = sClient(t, p, port, "-servername", "c.test")
	if _, ok := answered(out); err == nil || ok || !strings.Contains(out, "alert") {
		t.Errorf("-servername c.test: %v\n%s", err, out)
	}
}

// TestOpenSSLResumption: a session s_client saved (-sess_out) resumes (-sess_in) on a new
// connection, TLS 1.2 and TLS 1.3 alike, whichever of the server's loops each connection lands
// on; the handler sees it resumed.
func TestOpenSSLResumption(t *testing.T) {
	p := newTLSPKI(t)
	port := serveTLS(t, &tls.Config{Certificates: []tls.Certificate{p.leaf(t, "localhost")}})
	for _, tc := range []struct{ flag, proto string }{
		{"-tls1_2", "TLSv1.2"},
		{"-tls1_3", "TLSv1.3"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			sess := filepath.Join(t.TempDir(), "session.pem")
			out, err := sClient(t, p, port, tc.flag, "-servername", "localhost", "-sess_out", sess)
			if line, ok := answered(out); err != nil || !ok || !strings.Contains(out, "New, "+tc.proto) ||
				!strings.Contains(line, " resumed=false ") {
				t.Fatalf("first connection: %v\n%s", err, out)
			}
			for i := range 4 {
				out, err = sClient(t, p, port, tc.flag, "-servername", "localhost", "-sess_in", sess, "-sess_out", sess)
				if line, ok := answered(out); err != nil || !ok || !strings.Contains(out, "Reused, "+tc.proto) ||
					!strings.Contains(line, " resumed=true ") {
					t.Fatalf("resumption %d: %v\n%s", i+1, err, out)
				}
			}
		})
	}
}
