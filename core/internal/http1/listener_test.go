package http1

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// schemeHandler answers who served the request, by which scheme, and whether TLS carried it.
func schemeHandler(name string) serve.Handler {
	return func(c *serve.Ctx) {
		tlsState := "no TLS"
		if c.TLS() != nil {
			tlsState = "TLS"
		}
		c.WriteString(name + " " + c.Scheme() + " " + tlsState)
	}
}

// get fetches url with client and returns the body.
func get(t *testing.T, client *http.Client, url string) string {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// refused fails the test unless nothing accepts connections on addr.
func refused(t *testing.T, addr net.Addr) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr.String(), patience)
	if err == nil {
		c.Close()
		t.Fatalf("%s still accepts connections", addr)
	}
}

func TestListenersServeTogether(t *testing.T) {
	p := newPKI(t)
	cfg := &tls.Config{Certificates: []tls.Certificate{p.cert(t, "localhost", false, "localhost")}}
	s := newServer(schemeHandler("app"), serve.Options{Addr: "127.0.0.1:0", Loops: 2, TLSConfig: cfg, Logger: newTestLogger(&logBuffer{})})
	if err := s.AddListener(serve.Listener{Addr: "127.0.0.1:0", Handler: schemeHandler("redirect")}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddListener(serve.Listener{Addr: "127.0.0.1:0", TLS: true}); err != nil {
		t.Fatal(err)
	}
	if addrs := s.Addrs(); len(addrs) != 3 || addrs[0] != nil || addrs[1] != nil || addrs[2] != nil {
		t.Fatalf("Addrs before Listen: %v, want 3 nil", addrs)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	addrs := s.Addrs()
	if len(addrs) != 3 || addrs[0].String() != s.Addr().String() || addrs[0].String() == addrs[1].String() || addrs[1].String() == addrs[2].String() {
		t.Fatalf("Addrs %v, Addr %v: want three addresses, Addr's first", addrs, s.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- s.ListenAndServe() }()

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: p.clientConfig(0), DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	host := func(a net.Addr) string { return "localhost:" + strings.TrimPrefix(a.String(), "127.0.0.1:") }
	// Several connections each, so that both loops take some from every listener.
	for range 6 {
		for i, want := range []string{"app https TLS", "redirect http no TLS", "app https TLS"} {
			scheme := "https://"
			if i == 1 {
				scheme = "http://"
			}
			if got := get(t, client, scheme+host(addrs[i])+"/"); got != want {
				t.Fatalf("listener %d (%s): %q, want %q", i, addrs[i], got, want)
			}
		}
	}
	// Each listener speaks its own transport: plaintext to a TLS one is refused as ever.
	c := dial(t, addrs[2].String())
	c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, _ := c.Response("GET"); resp.StatusCode != 400 {
		t.Fatalf("plaintext to the TLS listener: %d, want a 400", resp.StatusCode)
	}

	if err := s.AddListener(serve.Listener{Addr: "127.0.0.1:0"}); err == nil {
		t.Fatal("AddListener while serving: no error")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != serve.ErrServerClosed {
		t.Fatal(err)
	}
	for _, a := range addrs {
		refused(t, a)
	}
}

func TestListenerTLSWithoutConfig(t *testing.T) {
	s := newServer(helloHandler, serve.Options{Addr: "127.0.0.1:0", Logger: newTestLogger(&logBuffer{})})
	if err := s.AddListener(serve.Listener{Addr: "127.0.0.1:0", TLS: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	addrs := s.Addrs()
	err := s.ListenAndServe()
	if err == nil || !errors.Is(err, serve.ErrNoTLSConfig) || !strings.Contains(err.Error(), "127.0.0.1:0") {
		t.Fatalf("ListenAndServe: %v, want the TLS listener named as having no configuration", err)
	}
	for _, a := range addrs {
		refused(t, a)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestListenFailsWhole(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	s := newServer(helloHandler, serve.Options{Addr: "127.0.0.1:0", Logger: newTestLogger(&logBuffer{})})
	if err := s.AddListener(serve.Listener{Addr: taken.Addr().String()}); err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err == nil {
		t.Fatal("Listen on a port in use: no error")
	}
	if a := s.Addrs()[0]; a != nil {
		refused(t, a) // opened by the Listen that failed, and closed by it
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestServeWithListeners(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(schemeHandler("app"), serve.Options{Loops: 2, Logger: newTestLogger(&logBuffer{})})
	if err := s.AddListener(serve.Listener{Addr: "127.0.0.1:0", Handler: schemeHandler("other")}); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ln) }()
	var addrs []net.Addr
	waitFor(t, "Serve to open the other listener", func() bool {
		addrs = s.Addrs()
		return addrs[1] != nil
	})
	if addrs[0].String() != ln.Addr().String() {
		t.Fatalf("Addrs()[0] = %v, want Serve's listener %v", addrs[0], ln.Addr())
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for i, want := range []string{"app http no TLS", "other http no TLS"} {
		if got := get(t, client, "http://"+addrs[i].String()+"/"); got != want {
			t.Fatalf("listener %d: %q, want %q", i, got, want)
		}
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != serve.ErrServerClosed {
		t.Fatal(err)
	}
	for _, a := range addrs {
		refused(t, a)
	}
}

// TestServeOrderRefusals: Serve with a listener after Listen, which opened Options.Addr, fails
// rather than serving Options.Addr with the listener never accepted from; ListenAndServeTLS
// after Shutdown is ErrServerClosed, as ListenAndServe, whatever its certificate.
func TestServeOrderRefusals(t *testing.T) {
	s := newServer(helloHandler, serve.Options{Addr: "127.0.0.1:0", Logger: newTestLogger(&logBuffer{})})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := s.Serve(ln); err == nil || !strings.Contains(err.Error(), "after Listen") {
		t.Fatalf("Serve(ln) after Listen: %v", err)
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.ListenAndServeTLS("", ""); err != serve.ErrServerClosed {
		t.Fatalf("ListenAndServeTLS after Shutdown: %v, want ErrServerClosed", err)
	}
}
