package interop

import (
	"crypto/tls"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// curlInfo is one transfer as curl saw it (its -w line) and as the server did (tlsInfo's line).
type curlInfo struct {
	httpVersion string // %{http_version}: "1.1", "2"
	connects    string // %{num_connects}: new connections made for this transfer
	status      string // %{response_code}
	server      string // the body: tlsInfo's line
}

// curlWrite is the -w format curlInfo parses, written after each transfer's body.
const curlWrite = `~transfer %{http_version} %{num_connects} %{response_code}\n`

// curl runs curl with args (the URLs among them) and returns one curlInfo per transfer; it
// fails the test unless curl exits cleanly.
func curl(t *testing.T, args ...string) []curlInfo {
	t.Helper()
	out, err := runTool(t, "", tool(t, "curl"), append([]string{"-sS", "-w", curlWrite}, args...)...)
	if err != nil {
		t.Fatalf("curl %q: %v\n%s", args, err, out)
	}
	var infos []curlInfo
	var body []string
	for line := range strings.Lines(out) {
		line = strings.TrimSuffix(line, "\n")
		w, ok := strings.CutPrefix(line, "~transfer ")
		if !ok {
			body = append(body, line)
			continue
		}
		f := strings.Fields(w)
		if len(f) != 3 {
			t.Fatalf("curl %q: -w line %q", args, line)
		}
		infos = append(infos, curlInfo{httpVersion: f[0], connects: f[1], status: f[2], server: strings.Join(body, "\n")})
		body = nil
	}
	return infos
}

// TestCurlTLS: curl, on OpenSSL, trusting the test's CA through --cacert, gets its answers
// over TLS as HTTP/1.1 when it asks for that (--http1.1: ALPN offers http/1.1 alone), and as
// HTTP/2 when it offers h2 (--http2, and its default over TLS: ALPN chooses h2, the server's
// first choice), at the TLS version it asks for, two URLs over one kept-alive connection in
// either; without the CA it refuses the server.
func TestCurlTLS(t *testing.T) {
	p := newTLSPKI(t)
	port := serveTLS(t, &tls.Config{Certificates: []tls.Certificate{p.leaf(t, "localhost")}})
	url := "https://localhost:" + port + "/info"
	// localhost resolves to 127.0.0.1 only: the test never leaves the loopback address.
	resolve := "localhost:" + port + ":127.0.0.1"

	t.Run("keep-alive", func(t *testing.T) {
		infos := curl(t, "--cacert", p.caFile, "--resolve", resolve, "--http1.1", url, url+"?again")
		if len(infos) != 2 {
			t.Fatalf("%d transfers: %+v", len(infos), infos)
		}
		for _, in := range infos {
			if in.status != "200" || in.httpVersion != "1.1" ||
				!strings.HasPrefix(in.server, "proto=HTTP/1.1 scheme=https version=TLS 1.3 alpn=http/1.1 sni=localhost resumed=false ") {
				t.Errorf("transfer: %+v", in)
			}
		}
		// One connection for both: curl made one for the first and none for the second, and
		// the server saw the same peer address twice.
		if infos[0].connects != "1" || infos[1].connects != "0" || peer(infos[0].server) != peer(infos[1].server) {
			t.Errorf("not one connection: %+v", infos)
		}
	})

	t.Run("http2 offered", func(t *testing.T) {
		infos := curl(t, "--cacert", p.caFile, "--resolve", resolve, "--http2", url, url+"?again")
		if len(infos) != 2 {
			t.Fatalf("%d transfers: %+v", len(infos), infos)
		}
		for _, in := range infos {
			if in.status != "200" || in.httpVersion != "2" ||
				!strings.HasPrefix(in.server, "proto=HTTP/2.0 scheme=https version=TLS 1.3 alpn=h2 sni=localhost resumed=false ") {
				t.Errorf("--http2: %+v", in)
			}
		}
		// Both streams of one connection.
		if infos[0].connects != "1" || infos[1].connects != "0" || peer(infos[0].server) != peer(infos[1].server) {
			t.Errorf("not one connection: %+v", infos)
		}
	})

	for _, tc := range []struct {
		name    string
		args    []string
		version string
	}{
		{"TLS 1.2", []string{"--tlsv1.2", "--tls-max", "1.2"}, "TLS 1.2"},
		{"TLS 1.3", []string{"--tlsv1.3"}, "TLS 1.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// curl's default over TLS offers h2 (then http/1.1), and gets it.
			infos := curl(t, append(append([]string{"--cacert", p.caFile, "--resolve", resolve}, tc.args...), url)...)
			if len(infos) != 1 || infos[0].status != "200" || infos[0].httpVersion != "2" ||
				!strings.HasPrefix(infos[0].server, "proto=HTTP/2.0 scheme=https version="+tc.version+" alpn=h2 ") {
				t.Errorf("%q: %+v", tc.args, infos)
			}
		})
	}

	t.Run("untrusted", func(t *testing.T) {
		out, err := runTool(t, "", tool(t, "curl"), "-sS", "--resolve", resolve, url)
		// 60: the peer's certificate cannot be authenticated with the known CA certificates.
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 60 || strings.Contains(out, "proto=") {
			t.Errorf("curl without the CA: %v\n%s", err, out)
		}
	})

	t.Run("plaintext", func(t *testing.T) {
		infos := curl(t, "--resolve", resolve, strings.Replace(url, "https://", "http://", 1))
		if len(infos) != 1 || infos[0].status != "400" {
			t.Errorf("plaintext request on the TLS port: %+v", infos)
		}
	})
}

// peer is the peer= field of tlsInfo's line.
func peer(server string) string {
	_, p, _ := strings.Cut(server, " peer=")
	return p
}
