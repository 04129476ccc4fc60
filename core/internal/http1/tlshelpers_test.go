package http1

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/serve"
)

// testPKI is a certificate authority made for a test, and the certificates it signs: ECDSA
// P-256, nothing on disk.
type testPKI struct {
	pool  *x509.CertPool
	ca    *x509.Certificate
	caKey *ecdsa.PrivateKey
}

func newPKI(t testing.TB) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "dwell test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &testPKI{pool: pool, ca: ca, caKey: key}
}

var serialMu sync.Mutex
var serial int64 = 1

// cert returns a certificate for cn signed by the CA: a server's for the DNS names (and
// 127.0.0.1), or a client's.
func (p *testPKI) cert(t testing.TB, cn string, client bool, names ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serialMu.Lock()
	serial++
	sn := serial
	serialMu.Unlock()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(sn),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		DNSNames:     names,
	}
	if client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// startTLS serves h over TLS with a certificate for localhost, unless o has a TLSConfig.
func startTLS(t testing.TB, p *testPKI, h serve.Handler, o serve.Options) (*serve.Server, string) {
	t.Helper()
	if o.TLSConfig == nil {
		o.TLSConfig = &tls.Config{Certificates: []tls.Certificate{p.cert(t, "localhost", false, "localhost")}}
	}
	return startServer(t, h, o)
}

// startTLSOffering is startTLS on a server whose Multiplexer is only a name TLS offers, "h2"
// (alpnOnly): the ALPN rules are serve's, whatever the protocol.
func startTLSOffering(t testing.TB, p *testPKI, h serve.Handler, o serve.Options) (*serve.Server, string) {
	t.Helper()
	if o.TLSConfig == nil {
		o.TLSConfig = &tls.Config{Certificates: []tls.Certificate{p.cert(t, "localhost", false, "localhost")}}
	}
	return startServerMux(t, h, o, alpnOnly{})
}

// alpnOnly is a Multiplexer that TLS offers as "h2" and that takes no connection over.
type alpnOnly struct{}

func (alpnOnly) Chooses(*serve.Socket, []byte) bool     { return false }
func (alpnOnly) MayBeDamagedPreface(*serve.Socket) bool { return false }
func (alpnOnly) ALPN() string                           { return "h2" }
func (alpnOnly) NewLoop(*serve.Loop) any                { return nil }
func (alpnOnly) Deadline(*engine.Timer, *serve.Loop)    {}

// clientConfig trusts the CA and speaks version v (0: any).
func (p *testPKI) clientConfig(v uint16) *tls.Config {
	return &tls.Config{RootCAs: p.pool, ServerName: "localhost", MinVersion: v, MaxVersion: v}
}

// tlsDial opens a TLS connection and finishes its handshake.
func tlsDial(t testing.TB, addr string, cfg *tls.Config) (*tls.Conn, *bufio.Reader) {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Deadline: time.Now().Add(patience)}, "tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(patience))
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

var tlsVersions = []struct {
	name string
	v    uint16
}{{"TLS1.2", tls.VersionTLS12}, {"TLS1.3", tls.VersionTLS13}}

// rawRecorder is a net.Conn that keeps a copy of what it reads, and can stop writing part way
// through a write (cut: write that many bytes of the next write, then nothing) or write a byte
// at a time.
type rawRecorder struct {
	net.Conn
	mu      sync.Mutex
	got     []byte
	cut     int // > 0: the next write sends cut bytes and drops the rest, as do all after it
	cutDone bool
	trickle bool
}

func (r *rawRecorder) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	r.mu.Lock()
	r.got = append(r.got, p[:n]...)
	r.mu.Unlock()
	return n, err
}

func (r *rawRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	cut, done, trickle := r.cut, r.cutDone, r.trickle
	if cut > 0 {
		r.cutDone = true
	}
	r.mu.Unlock()
	switch {
	case done:
		return len(p), nil
	case cut > 0:
		_, err := r.Conn.Write(p[:min(cut, len(p))])
		return len(p), err
	case trickle:
		for i := range p {
			if _, err := r.Conn.Write(p[i : i+1]); err != nil {
				return i, err
			}
		}
		return len(p), nil
	}
	return r.Conn.Write(p)
}

// records splits a TLS byte stream into its records' types and lengths.
func records(b []byte) (types []byte, lens []int) {
	for len(b) >= 5 {
		n := int(b[3])<<8 | int(b[4])
		types = append(types, b[0])
		lens = append(lens, n)
		if len(b) < 5+n {
			break
		}
		b = b[5+n:]
	}
	return types, lens
}

// ReadBody reads a response and returns its body.
func readBody(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
