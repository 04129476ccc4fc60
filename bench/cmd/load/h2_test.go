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

// h2Server is a net/http server in the test's process answering GET /hello, parking GET /poll
// until POST /release, over h2c with prior knowledge, or h2 over TLS with tls set (then cert is
// its certificate's path, for -cert). maxStreams bounds its concurrent streams when not zero.
func h2Server(t *testing.T, tls bool, maxStreams int) (addr, cert string) {
	gate := peer.NewGate()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			http.Error(w, "not HTTP/2", http.StatusHTTPVersionNotSupported)
			return
		}
		io.WriteString(w, peer.Hello)
	})
	mux.HandleFunc("GET /poll", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-gate.Wait():
			io.WriteString(w, peer.Released)
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("POST /release", func(w http.ResponseWriter, r *http.Request) { gate.Release() })
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if maxStreams > 0 {
		srv.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: maxStreams}
	}
	if tls {
		srv.EnableHTTP2 = true
		srv.StartTLS()
		cert = filepath.Join(t.TempDir(), "cert.pem")
		if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
			t.Fatal(err)
		}
	} else {
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String(), cert
}

// TestH2Idle holds a few idle HTTP/2 connections, h2c and over TLS, each having completed one
// request (which the server refuses unless it came over HTTP/2).
func TestH2Idle(t *testing.T) {
	for _, secure := range []bool{false, true} {
		addr, cert := h2Server(t, secure, 0)
		args := []string{"-addr", addr, "-pid", strconv.Itoa(os.Getpid()), "-n", "20", "-at", "10,20"}
		if secure {
			args = append(args, "-tls", "-cert", cert)
		}
		v, err := runH2Idle(context.Background(), args)
		if err != nil {
			t.Fatalf("tls %v: %v", secure, err)
		}
		res := v.(*holdResult)
		if res.Conns != 20 || len(res.Checkpoints) != 2 || secure != strings.HasSuffix(res.Negotiated, ", h2") {
			t.Errorf("tls %v: %+v", secure, res)
		}
	}
}

// TestH2Park parks streams on a few connections, releases them and counts the answers; a server
// that allows fewer streams per connection than the figure parks is refused before any is sent.
func TestH2Park(t *testing.T) {
	addr, _ := h2Server(t, false, 0)
	pid := strconv.Itoa(os.Getpid())
	v, err := runH2Park(context.Background(), []string{"-addr", addr, "-pid", pid, "-conns", "4", "-streams", "5",
		"-at", "8,20", "-release"})
	if err != nil {
		t.Fatal(err)
	}
	res := v.(*h2ParkResult)
	if res.Released != 20 || len(res.Checkpoints) != 2 || res.Checkpoints[1].Streams != 20 || res.MaxStreams == 0 {
		t.Errorf("%+v", res)
	}
	small, _ := h2Server(t, false, 3)
	_, err = runH2Park(context.Background(), []string{"-addr", small, "-pid", pid, "-conns", "2", "-streams", "5", "-at", "10"})
	if err == nil || !strings.Contains(err.Error(), "SETTINGS_MAX_CONCURRENT_STREAMS") {
		t.Errorf("a server of 3 streams per connection: %v", err)
	}
	if _, err := runH2Park(context.Background(), []string{"-addr", addr, "-pid", pid, "-conns", "4", "-streams", "5", "-at", "6,20"}); err == nil {
		t.Error("a checkpoint that is no multiple of the connections was accepted")
	}
}
