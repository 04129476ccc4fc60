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
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/coretest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
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

// TestLongStream: one reflection stream carries 20,000 request/response exchanges, over h2c
// and over TLS — with grpc-go's client pinging as data arrives (its bandwidth estimator) and
// giving back its windows as it reads — and every answer comes, on the stream it began on.
func TestLongStream(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 exchanges over each transport")
	}
	certFile, keyFile, pool := selfSigned(t)
	for _, secure := range []bool{false, true} {
		name, creds := "h2c", insecure.NewCredentials()
		if secure {
			more, _ := json.Marshal([]string{"-cert", certFile, "-key", keyFile})
			t.Setenv("GRPC_MORE_ARGS", string(more))
			name, creds = "tls", credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "localhost"})
		}
		t.Run(name, func(t *testing.T) {
			cmd := coretest.StartCommand(t, "GRPC_RUN_MAIN", "1")
			conn, err := grpc.NewClient(cmd.Addr, grpc.WithTransportCredentials(creds))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(t.Context())
			if err != nil {
				t.Fatalf("reflection: %v", err)
			}
			const exchanges = 20000
			for i := range exchanges {
				req := &reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{
					FileContainingSymbol: "grpc.health.v1.Health"}}
				if i%2 == 1 {
					req.MessageRequest = &reflectionpb.ServerReflectionRequest_ListServices{}
				}
				if err := stream.Send(req); err != nil {
					t.Fatalf("exchange %d: send: %v", i, err)
				}
				resp, err := stream.Recv()
				if err != nil {
					t.Fatalf("exchange %d: %v", i, err)
				}
				if got := len(resp.GetFileDescriptorResponse().GetFileDescriptorProto()) + len(resp.GetListServicesResponse().GetService()); got == 0 {
					t.Fatalf("exchange %d: an empty answer %v", i, resp)
				}
			}
			stream.CloseSend()
			if _, err := stream.Recv(); err != io.EOF {
				t.Fatalf("after %d exchanges, the stream's end: %v", exchanges, err)
			}
			cmd.Terminate()
			if err := cmd.Wait(coretest.Patience); err != nil {
				t.Fatalf("after SIGTERM: %v", err)
			}
		})
	}
}

// TestKeepaliveIdleStream: a grpc-go client that pings every 10 s (its shortest keepalive),
// with or without calls under way, keeps an idle Health/Watch stream and its connection for
// five minutes: the pings never count as a flood. It takes that long, so it runs only when
// DWELL_LONG_TESTS is set.
func TestKeepaliveIdleStream(t *testing.T) {
	if os.Getenv("DWELL_LONG_TESTS") == "" {
		t.Skip("five minutes long: set DWELL_LONG_TESTS=1 to run it")
	}
	cmd := coretest.StartCommand(t, "GRPC_RUN_MAIN", "1")
	conn, err := grpc.NewClient(cmd.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 5 * time.Second, PermitWithoutStream: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	watch, err := healthpb.NewHealthClient(conn).Watch(t.Context(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := watch.Recv(); err != nil || resp.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Watch: %v, %v", resp, err)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := watch.Recv() // nothing comes while the status stays SERVING
		ended <- err
	}()
	select {
	case err := <-ended:
		t.Fatalf("the idle stream ended: %v", err)
	case <-time.After(5 * time.Minute):
	}
	resp, err := healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{})
	if err != nil || resp.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("a call after five minutes of pings: %v, %v", resp, err)
	}
	if s := conn.GetState(); s != connectivity.Ready {
		t.Fatalf("the connection is %v", s)
	}
	cmd.Terminate()
	cmd.Wait(coretest.Patience)
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
