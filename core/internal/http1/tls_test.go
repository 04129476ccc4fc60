package http1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/internal/engine"
	"github.com/dwellhttp/dwell/core/internal/netpoll"
	"github.com/dwellhttp/dwell/core/internal/serve"
)

// tlsInfo answers with what the handler sees of the connection's TLS.
func tlsInfo(c *serve.Ctx) {
	st := c.TLS()
	if st == nil {
		c.WriteString("no TLS " + c.Scheme())
		return
	}
	peer := "-"
	if len(st.PeerCertificates) > 0 {
		peer = st.PeerCertificates[0].Subject.CommonName
	}
	fmt.Fprintf(c, "%s %s %x sni=%s alpn=%s peer=%s resumed=%v", c.Scheme(), c.Path(), st.Version,
		st.ServerName, st.NegotiatedProtocol, peer, st.DidResume)
}

func TestTLSKeepAlive(t *testing.T) {
	p := newPKI(t)
	_, addr := startTLS(t, p, tlsInfo, serve.Options{})
	for _, tv := range tlsVersions {
		t.Run(tv.name, func(t *testing.T) {
			cc := p.clientConfig(tv.v)
			cc.NextProtos = []string{"http/1.1"}
			tr := &http.Transport{TLSClientConfig: cc}
			defer tr.CloseIdleConnections()
			cl := &http.Client{Transport: tr}
			for i := range 5 {
				reused := false
				ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
					GotConn: func(ci httptrace.GotConnInfo) { reused = ci.Reused },
				})
				req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+addr+"/k"+strconv.Itoa(i), nil)
				resp, err := cl.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				want := fmt.Sprintf("https /k%d %x sni=localhost alpn=http/1.1 peer=- resumed=false", i, tv.v)
				if string(b) != want {
					t.Fatalf("got %q, want %q", b, want)
				}
				if i > 0 && !reused {
					t.Errorf("request %d: a new connection", i)
				}
				if resp.TLS == nil || resp.TLS.Version != tv.v {
					t.Errorf("client's state %+v", resp.TLS)
				}
			}
		})
	}
}

func TestTLSPipelined(t *testing.T) {
	p := newPKI(t)
	_, addr := startTLS(t, p, func(c *serve.Ctx) { c.WriteString("r" + c.Path()) }, serve.Options{})
	for _, tv := range tlsVersions {
		t.Run(tv.name, func(t *testing.T) {
			c, r := tlsDial(t, addr, p.clientConfig(tv.v))
			var req strings.Builder
			for i := range 20 {
				fmt.Fprintf(&req, "GET /%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
			}
			if _, err := c.Write([]byte(req.String())); err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				resp, err := http.ReadResponse(r, nil)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				if want := "r/" + strconv.Itoa(i); string(b) != want {
					t.Fatalf("response %d: %q, want %q", i, b, want)
				}
			}
		})
	}
}

// TestTLSLargeTransfers sends a large body each way, and a file (sendfile's path, which TLS
// takes through the record layer), with keep-alive between them.
func TestTLSLargeTransfers(t *testing.T) {
	p := newPKI(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<16+7) // 3 MiB and a bit
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, big, 0o600); err != nil {
		t.Fatal(err)
	}
	h := func(c *serve.Ctx) {
		switch c.Path() {
		case "/down":
			c.Write(big)
		case "/file":
			f, err := os.Open(file)
			if err != nil {
				c.SetStatus(500)
				return
			}
			defer f.Close()
			c.SendFile(f, 5, int64(len(big))-5)
		case "/up":
			sum := sha256.New()
			buf := make([]byte, 10000)
			n := 0
			for {
				k, err := c.ReadBody(buf)
				sum.Write(buf[:k])
				n += k
				if err != nil {
					break
				}
			}
			fmt.Fprintf(c, "%d %x", n, sum.Sum(nil))
		}
	}
	_, addr := startTLS(t, p, h, serve.Options{})
	want := sha256.Sum256(big)
	for _, tv := range tlsVersions {
		t.Run(tv.name, func(t *testing.T) {
			tr := &http.Transport{TLSClientConfig: p.clientConfig(tv.v), MaxConnsPerHost: 1}
			defer tr.CloseIdleConnections()
			cl := &http.Client{Transport: tr}
			for range 2 {
				resp, err := cl.Get("https://" + addr + "/down")
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || !bytes.Equal(b, big) {
					t.Fatalf("download: %d bytes, %v", len(b), err)
				}
				resp, err = cl.Get("https://" + addr + "/file")
				if err != nil {
					t.Fatal(err)
				}
				b, err = io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || !bytes.Equal(b, big[5:]) {
					t.Fatalf("file: %d bytes, %v", len(b), err)
				}
				resp, err = cl.Post("https://"+addr+"/up", "application/octet-stream", bytes.NewReader(big))
				if err != nil {
					t.Fatal(err)
				}
				b, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				if w := fmt.Sprintf("%d %s", len(big), hex.EncodeToString(want[:])); string(b) != w {
					t.Fatalf("upload: %q, want %q", b, w)
				}
			}
		})
	}
}

func TestTLSResumption(t *testing.T) {
	p := newPKI(t)
	_, addr := startTLS(t, p, tlsInfo, serve.Options{Loops: 2})
	for _, tv := range tlsVersions {
		t.Run(tv.name, func(t *testing.T) {
			cfg := p.clientConfig(tv.v)
			cfg.ClientSessionCache = tls.NewLRUClientSessionCache(4)
			for i := range 3 {
				c, r := tlsDial(t, addr, cfg)
				c.Write([]byte("GET /r HTTP/1.1\r\nHost: x\r\n\r\n"))
				resp, err := http.ReadResponse(r, nil)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				if resumed := strings.HasSuffix(string(b), "resumed=true"); resumed != (i > 0) {
					t.Errorf("connection %d: %q", i, b)
				}
				if c.ConnectionState().DidResume != (i > 0) {
					t.Errorf("connection %d: client says resumed=%v", i, c.ConnectionState().DidResume)
				}
				c.Close()
			}
		})
	}
}

func TestTLSSNI(t *testing.T) {
	p := newPKI(t)
	a, b := p.cert(t, "a", false, "a.test"), p.cert(t, "b", false, "b.test")
	cfg := &tls.Config{GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if h.ServerName == "b.test" {
			return &b, nil
		}
		return &a, nil
	}}
	_, addr := startTLS(t, p, tlsInfo, serve.Options{TLSConfig: cfg})
	for _, name := range []string{"a.test", "b.test"} {
		cc := p.clientConfig(0)
		cc.ServerName = name
		c, r := tlsDial(t, addr, cc)
		if got := c.ConnectionState().PeerCertificates[0].DNSNames[0]; got != name {
			t.Errorf("asked for %s, got the certificate of %s", name, got)
		}
		c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		body, err := bodyOf(r)
		if err != nil || !strings.Contains(body, "sni="+name) {
			t.Errorf("%s: %q, %v", name, body, err)
		}
	}
}

func TestTLSClientCertificate(t *testing.T) {
	p := newPKI(t)
	cfg := &tls.Config{
		Certificates: []tls.Certificate{p.cert(t, "localhost", false, "localhost")},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    p.pool,
	}
	s, addr := startTLS(t, p, tlsInfo, serve.Options{TLSConfig: cfg})
	for _, tv := range tlsVersions {
		t.Run(tv.name, func(t *testing.T) {
			cc := p.clientConfig(tv.v)
			cc.Certificates = []tls.Certificate{p.cert(t, "alice", true)}
			c, r := tlsDial(t, addr, cc)
			c.Write([]byte("GET /me HTTP/1.1\r\nHost: x\r\n\r\n"))
			body, err := bodyOf(r)
			if err != nil || !strings.Contains(body, "peer=alice") {
				t.Errorf("with a certificate: %q, %v", body, err)
			}
			// Without one the handshake fails: at once under TLS 1.2, at the first read under
			// TLS 1.3 (the client's side finishes before the server has checked).
			nc, err := tls.Dial("tcp", addr, p.clientConfig(tv.v))
			if err == nil {
				nc.Write([]byte("GET /me HTTP/1.1\r\nHost: x\r\n\r\n"))
				_, err = io.ReadAll(nc)
				nc.Close()
			}
			if err == nil || !strings.Contains(err.Error(), "certificate") && !strings.Contains(err.Error(), "handshake failure") {
				t.Errorf("without a certificate: %v", err)
			}
		})
	}
	waitFor(t, "the refused connection closed", func() bool { return openConns(s) <= 1 })
}

// TestTLSALPN: "h2" is offered before "http/1.1", and only when HTTP/2 is served; a protocol
// the configuration names that is neither stays offered after them.
func TestTLSALPN(t *testing.T) {
	p := newPKI(t)
	for _, tc := range []struct {
		disable bool
		client  []string
		want    string
	}{
		{false, []string{"h2", "http/1.1"}, "h2"},
		{false, []string{"http/1.1", "h2"}, "h2"}, // the server's preference
		{false, []string{"http/1.1"}, "http/1.1"},
		{false, []string{"acme-tls/1"}, "acme-tls/1"},
		{true, []string{"h2", "http/1.1"}, "http/1.1"},
		{true, []string{"h2"}, ""}, // refused
	} {
		cfg := &tls.Config{
			Certificates: []tls.Certificate{p.cert(t, "localhost", false, "localhost")},
			NextProtos:   []string{"acme-tls/1", "h2"},
		}
		_, addr := startTLSOffering(t, p, tlsInfo, serve.Options{TLSConfig: cfg, DisableHTTP2: tc.disable})
		cc := p.clientConfig(0)
		cc.NextProtos = tc.client
		c, err := tls.Dial("tcp", addr, cc)
		if tc.want == "" {
			if err == nil {
				c.Close()
				t.Errorf("DisableHTTP2: an h2-only client connected, negotiating %q", c.ConnectionState().NegotiatedProtocol)
			} else if !strings.Contains(err.Error(), "protocol") {
				t.Errorf("DisableHTTP2, h2-only: %v", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("DisableHTTP2 %v, client %q: %v", tc.disable, tc.client, err)
			continue
		}
		if got := c.ConnectionState().NegotiatedProtocol; got != tc.want {
			t.Errorf("DisableHTTP2 %v, client %q: negotiated %q, want %q", tc.disable, tc.client, got, tc.want)
		}
		c.Close()
	}
}

func TestTLSPlainHTTPRequest(t *testing.T) {
	p := newPKI(t)
	_, addr := startTLS(t, p, tlsInfo, serve.Options{})
	c := dial(t, addr)
	c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "HTTP/1.0 400 Bad Request\r\n") ||
		!strings.HasSuffix(string(b), "\r\n\r\nClient sent an HTTP request to an HTTPS server.\n") {
		t.Errorf("got %q", b)
	}
}

// TestTLSStalledClients holds connections that stop in the handshake and in the middle of a
// record: each is closed by the header timeout, and meanwhile other clients are served.
func TestTLSStalledClients(t *testing.T) {
	p := newPKI(t)
	_, addr := startTLS(t, p, tlsInfo, serve.Options{HeaderTimeout: 300 * time.Millisecond, DisableDeferAccept: true})
	// A handshake cut short: the first bytes of a ClientHello's record, then silence.
	hs := dial(t, addr)
	hs.Write([]byte{0x16, 0x03, 0x01, 0x01, 0x00, 0x01, 0x00, 0x00, 0xfc, 0x03, 0x03})
	// A finished handshake, then part of a record.
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	rec := &rawRecorder{Conn: nc}
	mid := tls.Client(rec, p.clientConfig(0))
	if err := mid.Handshake(); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	rec.cut = 20
	rec.mu.Unlock()
	mid.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	// Others are served meanwhile.
	for range 3 {
		c, r := tlsDial(t, addr, p.clientConfig(0))
		c.Write([]byte("GET /other HTTP/1.1\r\nHost: x\r\n\r\n"))
		if body, err := bodyOf(r); err != nil || !strings.HasPrefix(body, "https /other") {
			t.Fatalf("another client: %q, %v", body, err)
		}
	}
	if _, err := io.ReadAll(hs); err != nil && !isReset(err) {
		t.Errorf("cut handshake: %v", err)
	}
	if b, err := io.ReadAll(nc); err != nil && !isReset(err) {
		t.Errorf("cut record: %v (%d bytes)", err, len(b))
	}
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && strings.Contains(ne.Err.Error(), "reset")
}

// TestTLSByteAtATime has the client write its handshake and its requests a byte at a time.
func TestTLSByteAtATime(t *testing.T) {
	p := newPKI(t)
	_, addr := startTLS(t, p, tlsInfo, serve.Options{})
	for _, tv := range tlsVersions {
		t.Run(tv.name, func(t *testing.T) {
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			c := tls.Client(&rawRecorder{Conn: nc, trickle: true}, p.clientConfig(tv.v))
			r := newReader(c)
			for i := range 2 {
				fmt.Fprintf(c, "GET /b%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
				body, err := bodyOf(r)
				if err != nil || !strings.HasPrefix(body, "https /b"+strconv.Itoa(i)) {
					t.Fatalf("request %d: %q, %v", i, body, err)
				}
			}
		})
	}
}

// TestTLSShutdownCloseNotify checks that a graceful shutdown ends an idle keep-alive TLS
// connection with a close_notify alert: the last record before the end of the stream.
func TestTLSShutdownCloseNotify(t *testing.T) {
	p := newPKI(t)
	for _, tv := range tlsVersions {
		t.Run(tv.name, func(t *testing.T) {
			s, addr := startTLS(t, p, tlsInfo, serve.Options{})
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			rec := &rawRecorder{Conn: nc}
			c := tls.Client(rec, p.clientConfig(tv.v))
			r := newReader(c)
			c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
			if _, err := bodyOf(r); err != nil {
				t.Fatal(err)
			}
			go s.Shutdown(context.Background())
			if _, err := r.ReadByte(); err != io.EOF {
				t.Fatalf("after shutdown: %v, want io.EOF", err)
			}
			if _, err := io.ReadAll(nc); err != nil {
				t.Fatal(err)
			}
			rec.mu.Lock()
			types, lens := records(rec.got)
			rec.mu.Unlock()
			last := len(types) - 1
			// An alert record: in the clear under TLS 1.2 (type 21, 2 bytes sealed with
			// AES-GCM's 8-byte explicit nonce and 16-byte tag, or ChaCha20-Poly1305's tag alone:
			// crypto/tls prefers it where the processor has no AES instructions), wrapped as
			// application data under TLS 1.3 (2 bytes, the inner type, the tag).
			sealed := 26
			switch c.ConnectionState().CipherSuite {
			case tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256:
				sealed = 18
			}
			ok := types[last] == 21 && lens[last] == sealed
			if tv.v == tls.VersionTLS13 {
				ok = types[last] == 23 && lens[last] == 19
			}
			if !ok {
				t.Errorf("last record: type %d, %d bytes", types[last], lens[last])
			}
		})
	}
}

// TestTLSServeListener checks that Serve over a plain listener speaks TLS when TLSConfig is
// set, and ListenAndServeTLS with files.
func TestTLSServeListener(t *testing.T) {
	p := newPKI(t)
	cert := p.cert(t, "localhost", false, "localhost")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(tlsInfo, serve.Options{TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}})
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ln) }()
	c, r := tlsDial(t, ln.Addr().String(), p.clientConfig(0))
	c.Write([]byte("GET /serve HTTP/1.1\r\nHost: x\r\n\r\n"))
	if body, err := bodyOf(r); err != nil || !strings.HasPrefix(body, "https /serve") {
		t.Errorf("Serve: %q, %v", body, err)
	}
	s.Shutdown(context.Background())
	if err := <-errc; err != serve.ErrServerClosed {
		t.Errorf("Serve returned %v", err)
	}

	if err := newServer(tlsInfo, serve.Options{Addr: "127.0.0.1:0"}).ListenAndServeTLS("/nonexistent", "/nonexistent"); err == nil {
		t.Error("ListenAndServeTLS with missing files: no error")
	}
	if err := newServer(tlsInfo, serve.Options{Addr: "127.0.0.1:0", TLSConfig: &tls.Config{}}).ListenAndServe(); err == nil {
		t.Error("a TLSConfig without certificates: no error")
	}
}

func TestPlainHasNoTLS(t *testing.T) {
	_, addr := startServer(t, tlsInfo, serve.Options{})
	c := dial(t, addr)
	c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	if body, err := readResp(c); err != nil || body != "no TLS http" {
		t.Errorf("got %q, %v", body, err)
	}
}

// bodyOf reads one GET response from r and returns its body.
func bodyOf(r *bufio.Reader) (string, error) {
	resp, err := http.ReadResponse(r, &http.Request{Method: "GET"})
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestTLSShortWrites has the socket take a few bytes of each write and refuse every other
// one, so that the TLS layer holds records behind a full socket, for a large body and for a
// file: the plaintext they carry must be reported written once, and the stream go on where it
// left off.
func TestTLSShortWrites(t *testing.T) {
	p := newPKI(t)
	big := make([]byte, 2<<20)
	for i := range big {
		big[i] = byte(i * 7 / 5)
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, big, 0o600); err != nil {
		t.Fatal(err)
	}
	var refused atomic.Int64
	calls := 0
	engine.TLSWrite = func(fd int, p []byte) (int, netpoll.Errno) { // on the server's one loop only
		calls++
		if calls%2 == 0 {
			refused.Add(1)
			return 0, netpoll.EAGAIN
		}
		return netpoll.Write(fd, p[:min(len(p), 3000)])
	}
	t.Cleanup(func() { engine.TLSWrite = netpoll.Write })
	_, addr := startTLS(t, p, func(c *serve.Ctx) {
		switch c.Path() {
		case "/file":
			f, err := os.Open(file)
			if err == nil {
				defer f.Close()
				c.SendFile(f, 0, int64(len(big)))
			}
		case "/small":
			c.WriteString("small")
		default:
			c.Write(big)
		}
	}, serve.Options{Loops: 1}) // one loop: the write hook counts its calls unsynchronised
	for _, tv := range tlsVersions {
		t.Run(tv.name, func(t *testing.T) {
			c, r := tlsDial(t, addr, p.clientConfig(tv.v))
			for _, path := range []string{"/body", "/small", "/file", "/small", "/body"} {
				fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
				body, err := bodyOf(r)
				want := string(big)
				if path == "/small" {
					want = "small"
				}
				if err != nil || body != want {
					t.Fatalf("%s: %d bytes, %v", path, len(body), err)
				}
			}
		})
	}
	if refused.Load() == 0 {
		t.Error("no write was refused")
	}
}
