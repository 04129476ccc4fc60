package nethttp

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net/http"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
)

// TestRequestTLS: over TLS a net/http handler's request carries the connection's state, as
// net/http's server gives it (r.TLS, with the name the client asked for); over plaintext none.
func TestRequestTLS(t *testing.T) {
	cert, pool := selfSigned(t, "bridge.test")
	h := func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			io.WriteString(w, "plaintext")
			return
		}
		io.WriteString(w, r.TLS.ServerName+" "+tls.VersionName(r.TLS.Version))
	}
	_, addr := serveStd(t, h, core.Options{TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}})
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, ServerName: "bridge.test", MinVersion: tls.VersionTLS13,
	}}}
	defer client.CloseIdleConnections()
	resp, err := client.Get("https://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got, want := string(b), "bridge.test TLS 1.3"; got != want {
		t.Errorf("over TLS: %q, want %q", got, want)
	}

	_, plainAddr := serveStd(t, h, core.Options{})
	resp, err = http.Get("http://" + plainAddr + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "plaintext" {
		t.Errorf("over plaintext: %q", b)
	}
}

// selfSigned makes a certificate for name, and a pool that trusts it.
func selfSigned(t *testing.T, name string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
