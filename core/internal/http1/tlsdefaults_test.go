package http1

import (
	"bufio"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// What a configuration that leaves versions and cipher suites zero gets (servertls.go,
// serverDefaults): TLS 1.2 and 1.3, and in TLS 1.2 only ECDHE with AES-GCM or ChaCha20-Poly1305,
// for ECDSA and RSA certificates; crypto/tls's CBC suites, which it would offer by default, are
// refused. A configuration that names its own is served as it is.

// The TLS 1.2 suites of each kind of certificate: the AEAD ones dwell offers by default, and
// the CBC ones crypto/tls implements (and offers by default, but for the SHA-256 ones).
var (
	aeadSuitesECDSA = []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	}
	aeadSuitesRSA = []uint16{
		tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	}
	cbcSuitesECDSA = []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
	}
	cbcSuitesRSA = []uint16{
		tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
		tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
		tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256,
	}
)

// rsaCert returns a server certificate for localhost with an RSA-2048 key, signed by the CA.
func (p *testPKI) rsaCert(t testing.TB) tls.Certificate {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	serialMu.Lock()
	serial++
	sn := serial
	serialMu.Unlock()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(sn),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// suiteClient is a client of the test CA that speaks TLS 1.2 and offers only the given suites.
func (p *testPKI) suiteClient(suites ...uint16) *tls.Config {
	cc := p.clientConfig(tls.VersionTLS12)
	cc.CipherSuites = suites
	return cc
}

// handshake dials addr with cc. When the handshake succeeds, it checks that the suite
// negotiated is the one the client offered first, and that the connection serves a request;
// it returns the handshake's error.
func handshake(t *testing.T, addr string, cc *tls.Config) error {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Deadline: time.Now().Add(patience)}, "tcp", addr, cc)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(patience))
	if got := c.ConnectionState().CipherSuite; len(cc.CipherSuites) > 0 && got != cc.CipherSuites[0] {
		t.Errorf("negotiated %s, the client offered %s", tls.CipherSuiteName(got), tls.CipherSuiteName(cc.CipherSuites[0]))
	}
	c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	if body, err := bodyOf(bufio.NewReader(c)); err != nil || body != "Hello World" {
		t.Errorf("over %s: %q, %v", tls.CipherSuiteName(c.ConnectionState().CipherSuite), body, err)
	}
	return nil
}

// wantRefused checks that a handshake failed on the server's alert, named by want: a refusal,
// not a connection that broke.
func wantRefused(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: the handshake succeeded, want it refused (%s)", what, want)
	} else if !strings.Contains(err.Error(), "remote error: tls: "+want) {
		t.Errorf("%s: %v, want the server's alert %q", what, err, want)
	}
}

func TestTLSDefaultCipherSuites(t *testing.T) {
	p := newPKI(t)
	for _, tc := range []struct {
		name      string
		cert      tls.Certificate
		aead, cbc []uint16
	}{
		{"ECDSA", p.cert(t, "localhost", false, "localhost"), aeadSuitesECDSA, cbcSuitesECDSA},
		{"RSA", p.rsaCert(t), aeadSuitesRSA, cbcSuitesRSA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &tls.Config{Certificates: []tls.Certificate{tc.cert}}
			_, addr := startTLS(t, p, helloHandler, serve.Options{TLSConfig: cfg})
			for _, s := range tc.aead {
				if err := handshake(t, addr, p.suiteClient(s)); err != nil {
					t.Errorf("a client offering only %s: %v", tls.CipherSuiteName(s), err)
				}
			}
			for _, s := range tc.cbc {
				wantRefused(t, "a client offering only "+tls.CipherSuiteName(s), handshake(t, addr, p.suiteClient(s)), "handshake failure")
			}
			// All of them at once, AEAD last: the server still takes an AEAD one.
			all := append(append([]uint16(nil), tc.cbc...), tc.aead...)
			c, _ := tlsDial(t, addr, p.suiteClient(all...))
			if got := c.ConnectionState().CipherSuite; !slices.Contains(tc.aead, got) {
				t.Errorf("a client offering CBC suites first negotiated %s", tls.CipherSuiteName(got))
			}
			// Below TLS 1.2 nothing is offered, whatever GODEBUG says.
			old := p.suiteClient(tc.cbc...)
			old.MinVersion, old.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
			wantRefused(t, "a TLS 1.1 client", handshake(t, addr, old), "protocol version not supported")
			// TLS 1.3 is untouched.
			if err := handshake(t, addr, p.clientConfig(tls.VersionTLS13)); err != nil {
				t.Errorf("TLS 1.3: %v", err)
			}
			// The defaults went into the server's copy, not into the application's.
			if cfg.CipherSuites != nil || cfg.MinVersion != 0 {
				t.Errorf("the application's configuration changed: CipherSuites %v, MinVersion %x", cfg.CipherSuites, cfg.MinVersion)
			}
		})
	}
}

// TestTLSExplicitCipherSuites has the application name its own suites, a CBC one among them,
// and its own minimum: they are served as they are, not merged with dwell's defaults.
func TestTLSExplicitCipherSuites(t *testing.T) {
	p := newPKI(t)
	cbc, gcm := tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
	cfg := &tls.Config{
		Certificates: []tls.Certificate{p.cert(t, "localhost", false, "localhost")},
		CipherSuites: []uint16{cbc, gcm},
		MinVersion:   tls.VersionTLS10,
	}
	_, addr := startTLS(t, p, helloHandler, serve.Options{TLSConfig: cfg})
	for _, s := range []uint16{cbc, gcm} {
		if err := handshake(t, addr, p.suiteClient(s)); err != nil {
			t.Errorf("a client offering only %s, which the application named: %v", tls.CipherSuiteName(s), err)
		}
	}
	chacha := tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
	wantRefused(t, "a client offering only "+tls.CipherSuiteName(chacha)+", which the application left out",
		handshake(t, addr, p.suiteClient(chacha)), "handshake failure")
	old := p.suiteClient(cbc)
	old.MinVersion, old.MaxVersion = tls.VersionTLS10, tls.VersionTLS10
	if err := handshake(t, addr, old); err != nil {
		t.Errorf("a TLS 1.0 client, which the application's MinVersion allows: %v", err)
	}
}

// TestTLSConfigForClientDefaults has GetConfigForClient answer each handshake with a
// configuration of its own: the defaults apply to it too, unless it names its suites.
func TestTLSConfigForClientDefaults(t *testing.T) {
	p := newPKI(t)
	cert := p.cert(t, "localhost", false, "localhost", "strict.test", "legacy.test")
	strict := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
	legacy := &tls.Config{Certificates: []tls.Certificate{cert}, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}}
	cfg := &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		if h.ServerName == "legacy.test" {
			return legacy, nil
		}
		return strict, nil
	}}
	_, addr := startTLSOffering(t, p, helloHandler, serve.Options{TLSConfig: cfg})
	client := func(name string, suites ...uint16) *tls.Config {
		cc := p.suiteClient(suites...)
		cc.ServerName = name
		return cc
	}
	cbc, gcm := tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
	if err := handshake(t, addr, client("strict.test", gcm)); err != nil {
		t.Errorf("strict.test, AEAD: %v", err)
	}
	wantRefused(t, "strict.test, CBC", handshake(t, addr, client("strict.test", cbc)), "handshake failure")
	if err := handshake(t, addr, client("legacy.test", cbc)); err != nil {
		t.Errorf("legacy.test, CBC, which its configuration names: %v", err)
	}
	// The per-client configuration's ALPN protocols are reduced as the server's own are.
	cc := client("strict.test", gcm)
	cc.NextProtos = []string{"spdy/3", "http/1.1", "h2"}
	c, _ := tlsDial(t, addr, cc)
	if got := c.ConnectionState().NegotiatedProtocol; got != "h2" {
		t.Errorf("negotiated %q, want h2", got)
	}
	if strict.CipherSuites != nil || strict.MinVersion != 0 || len(strict.NextProtos) != 2 {
		t.Errorf("the application's per-client configuration changed: %v %x %v", strict.CipherSuites, strict.MinVersion, strict.NextProtos)
	}
}
