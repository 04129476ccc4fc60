package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/coretest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
)

// TestMain runs the command itself when asked to by the tests, with the flags of
// GRPC_MORE_ARGS (a JSON list) after -addr.
func TestMain(m *testing.M) {
	if os.Getenv("GRPC_RUN_MAIN") == "1" {
		os.Args = []string{"grpc", "-addr", "127.0.0.1:0", "-loops", "2"}
		if more := os.Getenv("GRPC_MORE_ARGS"); more != "" {
			var args []string
			if err := json.Unmarshal([]byte(more), &args); err != nil {
				panic(err)
			}
			os.Args = append(os.Args, args...)
		}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestCommandH2C: over h2c (a plain port, HTTP/2 with prior knowledge), grpc-go's client gets
// SERVING from the health service, and lists the services by reflection.
func TestCommandH2C(t *testing.T) {
	cmd := coretest.StartCommand(t, "GRPC_RUN_MAIN", "1")
	if cmd.Scheme != "http" {
		t.Fatalf("scheme %q", cmd.Scheme)
	}
	conn, err := grpc.NewClient(cmd.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	checkServices(t, conn)
	cmd.Terminate()
	if err := cmd.Wait(coretest.Patience); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}
}

// TestCommandTLS: the same over TLS (-cert, -key), with "h2" chosen by ALPN.
func TestCommandTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	more, _ := json.Marshal([]string{"-cert", certFile, "-key", keyFile})
	t.Setenv("GRPC_MORE_ARGS", string(more))
	cmd := coretest.StartCommand(t, "GRPC_RUN_MAIN", "1")
	if cmd.Scheme != "https" {
		t.Fatalf("scheme %q", cmd.Scheme)
	}
	creds := credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "localhost"})
	conn, err := grpc.NewClient(cmd.Addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	checkServices(t, conn)
	cmd.Terminate()
	if err := cmd.Wait(coretest.Patience); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}
}

// checkServices asks the health service and reflection what a gRPC tool would.
func checkServices(t *testing.T, conn *grpc.ClientConn) {
	t.Helper()
	ctx := t.Context()
	for range 3 { // one connection, several calls in turn
		resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatalf("health check: %v", err)
		}
		if resp.Status != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health: %v", resp.Status)
		}
	}
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatalf("reflection: %v", err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{},
	}); err != nil {
		t.Fatalf("reflection: %v", err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatalf("reflection: %v", err)
	}
	stream.CloseSend()
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.Name)
	}
	for _, want := range []string{"grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"} {
		if !slices.Contains(names, want) {
			t.Errorf("reflection lists %q, without %s", names, want)
		}
	}
}

// selfSigned writes a self-signed certificate for localhost and 127.0.0.1 and its key, and
// returns their files and a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

var _ = context.Background
