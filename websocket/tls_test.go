package websocket_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/websocket"
)

// selfSigned returns a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// wssFrame is a masked text frame of any length a test sends.
func wssFrame(text string) []byte {
	mask := [4]byte{9, 8, 7, 6}
	b := []byte{0x81}
	switch n := len(text); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	b = append(b, mask[:]...)
	for i := range len(text) {
		b = append(b, text[i]^mask[i%4])
	}
	return b
}

// readText reads one unmasked, unfragmented frame's payload.
func readText(r *bufio.Reader) (string, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return "", err
	}
	n := int(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		io.ReadFull(r, l[:])
		n = int(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		io.ReadFull(r, l[:])
		n = int(binary.BigEndian.Uint64(l[:]))
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return string(b), err
}

// TestWSS runs WebSockets over TLS, in both styles, with messages small and larger than a
// record: the WebSocket package is unchanged, TLS being core's transport.
func TestWSS(t *testing.T) {
	cert, pool := selfSigned(t)
	echo := func(cx *core.Ctx) {
		if cx.Path() == "/events" {
			websocket.Serve(cx, nil, &websocket.Events{
				Message: func(ws *websocket.Conn, typ websocket.MessageType, data []byte) {
					ws.Send(typ, append([]byte("event: "), data...))
				},
			})
			return
		}
		ws, err := websocket.Accept(cx, nil)
		if err != nil {
			return
		}
		for {
			typ, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if err := ws.WriteMessage(typ, append([]byte("echo: "), msg...)); err != nil {
				return
			}
		}
	}
	s := core.NewServer(echo, core.Options{Addr: "127.0.0.1:0", TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.ListenAndServe() }()
	defer func() {
		s.Shutdown(context.Background())
		<-done
	}()
	large := strings.Repeat("0123456789", 7000) // 70 kB: several records each way
	for _, path := range []string{"/", "/events"} {
		prefix := "echo: "
		if path == "/events" {
			prefix = "event: "
		}
		c, err := tls.Dial("tcp", s.Addr().String(), &tls.Config{RootCAs: pool})
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(time.Minute))
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", path)
		r := bufio.NewReader(c)
		resp, err := http.ReadResponse(r, nil)
		if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("%s: upgrade: %v %v", path, resp, err)
		}
		for _, msg := range []string{"hello", large, "again"} {
			c.Write(wssFrame(msg))
			got, err := readText(r)
			if err != nil || got != prefix+msg {
				t.Fatalf("%s: got %.40q (%d bytes), %v", path, got, len(got), err)
			}
		}
		c.Close()
	}
}
