package nethttp

import (
	"crypto/tls"
	"io"
	"net/http"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestRequestTLS: over TLS a net/http handler's request carries the connection's state, as
// net/http's server gives it (r.TLS, with the name the client asked for); over plaintext none.
func TestRequestTLS(t *testing.T) {
	crt := coretest.NewCertificate(t, "bridge.test")
	h := func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			io.WriteString(w, "plaintext")
			return
		}
		io.WriteString(w, r.TLS.ServerName+" "+tls.VersionName(r.TLS.Version))
	}
	_, addr := serveStd(t, h, core.Options{TLSConfig: &tls.Config{Certificates: []tls.Certificate{crt.TLS}}})
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: crt.Pool, ServerName: "bridge.test", MinVersion: tls.VersionTLS13,
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
