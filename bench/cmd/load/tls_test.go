package main

import (
	"context"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/bench/internal/peer"
)

// tlsServer is an HTTPS server in the test's process answering GET /hello, and the path of
// its certificate for -cert.
func tlsServer(t *testing.T) (addr, cert string) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, peer.Hello)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake of the pinning test
	srv.StartTLS()
	t.Cleanup(srv.Close)
	cert = filepath.Join(t.TempDir(), "cert.pem")
	der := srv.Certificate().Raw
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(srv.URL, "https://"), cert
}

// TestTLSHandshake runs tls-handshake briefly against an in-process server, the test's own
// process standing for the server's CPU: full handshakes resume none, -resume resumes nearly
// all, and every connection negotiates TLS 1.3 with X25519.
func TestTLSHandshake(t *testing.T) {
	addr, cert := tlsServer(t)
	pid := os.Getpid()
	for _, resume := range []bool{false, true} {
		args := []string{"-addr", addr, "-pid", strconv.Itoa(pid), "-c", "2", "-warm", "100ms", "-d", "300ms", "-cert", cert}
		if resume {
			args = append(args, "-resume")
		}
		v, err := runTLSHandshake(context.Background(), args)
		if err != nil {
			t.Fatalf("resume %v: %v", resume, err)
		}
		res := v.(*tlsHandshakeResult)
		if res.Handshakes == 0 || res.CPUusPerHS <= 0 {
			t.Fatalf("resume %v: %+v", resume, res)
		}
		if !resume && res.Resumed != 0 || resume && res.ResumedFrac < 0.9 {
			t.Errorf("resume %v: %d of %d resumed", resume, res.Resumed, res.Handshakes)
		}
		for k := range res.Negotiated {
			if k != "TLS 1.3, TLS_AES_128_GCM_SHA256, X25519" && k != "TLS 1.3, TLS_CHACHA20_POLY1305_SHA256, X25519" {
				t.Errorf("negotiated %q", k)
			}
		}
	}
	// A pinned certificate that is not the server's fails the handshake.
	b, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	blk.Bytes[len(blk.Bytes)-1] ^= 0xff
	other := filepath.Join(t.TempDir(), "other.pem")
	if err := os.WriteFile(other, pem.EncodeToMemory(blk), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runTLSHandshake(context.Background(), []string{"-addr", addr, "-pid", strconv.Itoa(pid), "-c", "1",
		"-warm", "0s", "-d", "100ms", "-cert", other}); err == nil {
		t.Error("a pinned certificate that is not the server's was accepted")
	}
}

// TestIdleTLS holds a few idle TLS connections through idle -tls.
func TestIdleTLS(t *testing.T) {
	addr, cert := tlsServer(t)
	v, err := runIdle(context.Background(), []string{"-addr", addr, "-pid", strconv.Itoa(os.Getpid()), "-n", "20", "-at", "10,20",
		"-tls", "-cert", cert})
	if err != nil {
		t.Fatal(err)
	}
	res := v.(*holdResult)
	if res.Conns != 20 || len(res.Checkpoints) != 2 || !strings.HasPrefix(res.Negotiated, "TLS 1.3, ") {
		t.Fatalf("%+v", res)
	}
}
