package interop

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// The TLS tests run dwell's server, in this process, against TLS clients we did not write:
// curl (tls_curl_test.go) and openssl s_client (tls_openssl_test.go). Each skips when its tool
// is not installed (apt-get install curl openssl).

// A tlsPKI is a certificate authority made for a test (ECDSA P-256), its certificate written
// to caFile for the tools' --cacert and -CAfile, and the server certificates it signs.
type tlsPKI struct {
	caFile string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	serial int64
}

func newTLSPKI(t *testing.T) *tlsPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "dwell interop test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &tlsPKI{caFile: caFile, ca: ca, caKey: key, serial: 1}
}

// leaf returns a server certificate signed by the CA, for the DNS names and 127.0.0.1, with
// the first name as its common name.
func (p *tlsPKI) leaf(t *testing.T, names ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial),
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     names,
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// tlsInfo answers with what the server knows of the request's connection, one line:
//
//	proto=HTTP/1.1 scheme=https version=TLS 1.3 alpn=http/1.1 sni=localhost resumed=false peer=127.0.0.1:41234
func tlsInfo(c *core.Ctx) {
	c.SetHeader("Content-Type", "text/plain")
	st := c.TLS()
	if st == nil {
		fmt.Fprintf(c, "proto=%s scheme=%s no TLS\n", c.Proto(), c.Scheme())
		return
	}
	fmt.Fprintf(c, "proto=%s scheme=%s version=%s alpn=%s sni=%s resumed=%t peer=%s\n",
		c.Proto(), c.Scheme(), tls.VersionName(st.Version), st.NegotiatedProtocol, st.ServerName, st.DidResume, c.RemoteAddr())
}

// serveTLS serves tlsInfo over TLS with cfg on 127.0.0.1, on two loops (so that connections
// one after another may land on either), until the test ends, and returns its port.
func serveTLS(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	_, addr := coretest.Serve(t, tlsInfo, core.Options{TLSConfig: cfg, Loops: 2})
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// tool returns the path of a command-line tool, skipping the test when it is not installed.
func tool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not found (apt-get install %s): %v", name, name, err)
	}
	return path
}

// runTool runs a tool with stdin and returns what it wrote, stdout and stderr together, and how
// it exited. It is killed if it still runs after coretest.Patience: a hang fails rather than
// stalls the test.
func runTool(t *testing.T, stdin string, path string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), coretest.Patience)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.SysProcAttr = childAttr()
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %q still running after %v:\n%s", filepath.Base(path), args, coretest.Patience, out)
	}
	return string(out), err
}
