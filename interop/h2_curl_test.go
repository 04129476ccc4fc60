package interop

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// curl (on nghttp2) against dwell's HTTP/2: with prior knowledge on the plaintext port
// (--http2-prior-knowledge), by ALPN on the TLS one (--http2). The bodies go to files (-o),
// so that only curlWrite's lines come back on curl's output, and the bodies are compared
// whole.
//
// curl 7.88 does not reuse a prior-knowledge connection for a second URL of the same
// invocation: the second transfer fails with "Error in the HTTP2 framing layer" (a quirk of
// curl's, which Go's own h2c server gets too). Each h2c invocation has one URL.

// curlH2Args returns the arguments that make curl speak HTTP/2 to the port: prior knowledge
// on the plaintext one; on the TLS one, h2 offered by ALPN, the test's CA trusted, localhost
// resolved to 127.0.0.1 (so that the certificate is checked for a name, and sent by SNI).
func curlH2Args(s *h2Server, secure bool) []string {
	if !secure {
		return []string{"--http2-prior-knowledge"}
	}
	return []string{"--http2", "--cacert", s.pki.caFile, "--resolve", "localhost:" + s.port(true) + ":127.0.0.1"}
}

// curlURL is url for curl: the TLS port named localhost (see curlH2Args).
func curlURL(s *h2Server, secure bool, path string) string {
	if secure {
		return "https://localhost:" + s.port(true) + path
	}
	return s.url(false, path)
}

// oneTransfer checks that curl made one transfer over HTTP/2 with status 200, and returns it.
func oneTransfer(t *testing.T, what string, infos []curlInfo) curlInfo {
	t.Helper()
	if len(infos) != 1 || infos[0].httpVersion != "2" || infos[0].status != "200" {
		t.Fatalf("%s: %+v, want one transfer over HTTP/2 answered 200", what, infos)
	}
	return infos[0]
}

// TestCurlH2: curl gets HTTP/2 on both ports: the known body, whose handler saw HTTP/2.0; 1
// MiB streamed in flushed pieces; a POST of 3 MiB echoed, its body past the server's windows
// and the echo past curl's; and over TLS, ten URLs fetched at once (-Z), multiplexed as
// streams of one connection.
func TestCurlH2(t *testing.T) {
	s := serveH2(t)
	forEachPort(t, func(t *testing.T, secure bool) {
		h2 := curlH2Args(s, secure)
		dir := t.TempDir()

		in := oneTransfer(t, "/hello", curl(t, append(h2, curlURL(s, secure, "/hello"))...))
		if in.server != strings.TrimSuffix(helloBody("HTTP/2.0"), "\n") {
			t.Errorf("/hello: %q", in.server)
		}

		info := "proto=HTTP/2.0 scheme=http no TLS"
		if secure {
			info = "proto=HTTP/2.0 scheme=https version=TLS 1.3 alpn=h2 sni=localhost resumed=false "
		}
		if in := oneTransfer(t, "/info", curl(t, append(h2, curlURL(s, secure, "/info"))...)); !strings.HasPrefix(in.server, info) {
			t.Errorf("/info: %q, want %q...", in.server, info)
		}

		out := filepath.Join(dir, "stream")
		oneTransfer(t, "/stream", curl(t, append(h2, "-o", out, curlURL(s, secure, "/stream"))...))
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		sameBytes(t, "/stream", got, streamBytes(0, h2StreamSize))

		body := randomBody(3 << 20)
		src := writeTemp(t, "post", body)
		out = filepath.Join(dir, "echo")
		oneTransfer(t, "POST /echo", curl(t, append(h2, "--data-binary", "@"+src, "-H", "Content-Type: application/octet-stream",
			"-o", out, curlURL(s, secure, "/echo"))...))
		if got, err = os.ReadFile(out); err != nil {
			t.Fatal(err)
		}
		sameBytes(t, "the echo", got, body)

		if !secure {
			return // prior knowledge: one URL an invocation (see above)
		}
		// --no-progress-meter: -Z draws one even with -s, on the output the lines share.
		args := append(h2, "-Z", "--no-progress-meter")
		for i := range 10 {
			args = append(args, "-o", os.DevNull, curlURL(s, true, "/stream?n="+strconv.Itoa(100000+i)))
		}
		infos := curl(t, args...)
		connects := 0
		for _, in := range infos {
			n, _ := strconv.Atoi(in.connects)
			connects += n
			if in.httpVersion != "2" || in.status != "200" {
				t.Errorf("-Z: %+v", in)
			}
		}
		if len(infos) != 10 || connects != 1 {
			t.Errorf("-Z: %d transfers over %d connections, want 10 over 1: %+v", len(infos), connects, infos)
		}
	})
}

// TestCurlH2CUpgrade: dwell does not upgrade an HTTP/1.1 request to h2c (RFC 9113 §3.1 retires
// the Upgrade: h2c of RFC 7540), so curl's --http2 on an http:// URL, which asks for that
// upgrade, is answered in HTTP/1.1, as is a request that asks for nothing.
func TestCurlH2CUpgrade(t *testing.T) {
	s := serveH2(t)
	for _, args := range [][]string{{"--http2"}, nil} {
		infos := curl(t, append(args, s.url(false, "/hello"))...)
		if len(infos) != 1 || infos[0].httpVersion != "1.1" || infos[0].status != "200" ||
			infos[0].server != strings.TrimSuffix(helloBody("HTTP/1.1"), "\n") {
			t.Errorf("%q: %+v", args, infos)
		}
	}
}
