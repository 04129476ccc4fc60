package browser

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/dwellhttp/dwell/core/coretest"
)

// The chat over HTTPS: the program started with -cert and -key, its page opened at
// https://127.0.0.1:PORT in a Chromium that trusts the certificate's key and nothing else of
// it (--ignore-certificate-errors-spki-list: the certificate is self-signed, but only that
// one key passes), so that the page is a secure context and its socket goes over wss.

// tlsCert writes a self-signed certificate for 127.0.0.1 (ECDSA P-256) and its key, as PEM, to
// a directory of the test; it returns their paths, the SPKI hash Chromium's allowlist takes
// (base64 of the SHA-256 of the SubjectPublicKeyInfo) and a pool that trusts the certificate.
func tlsCert(t *testing.T) (certFile, keyFile, spki string, pool *x509.CertPool) {
	t.Helper()
	c := coretest.NewCertificate(t)
	sum := sha256.Sum256(c.Leaf.RawSubjectPublicKeyInfo)
	return c.CertFile, c.KeyFile, base64.StdEncoding.EncodeToString(sum[:]), c.Pool
}

// An httpsSite is the chat program serving HTTPS, run as a process of its own.
type httpsSite struct{ addr string }

func (s httpsSite) url() string { return "https://" + s.addr + "/" }

// startHTTPSProgram runs bin with -cert and -key on a free loopback port until the test ends,
// and waits until it says it listens on https.
func startHTTPSProgram(t *testing.T, bin, certFile, keyFile string) httpsSite {
	t.Helper()
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-loops", "2", "-cert", certFile, "-key", keyFile)
	stderr := new(coretest.LogBuffer)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The first line, before Wait: Wait closes the pipe once the process has exited.
	line, err := bufio.NewReader(out).ReadString('\n')
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("chat said:\n%s", stderr)
		}
	})
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening https://")
	if err != nil || !ok {
		t.Fatalf("first line %q (%v)", line, err)
	}
	return httpsSite{addr: addr}
}

// trustingBrowser starts a Chromium of the test's own, as TestMain starts the shared one, that
// accepts the certificate whose key has the SPKI hash; it is closed when the test ends.
func trustingBrowser(t *testing.T, spki string) context.Context {
	t.Helper()
	path := findChromium()
	if path == "" || browser == nil {
		t.Skip(noBrowser)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.WindowSize(900, 700),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("ignore-certificate-errors-spki-list", spki),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// openIn opens the chat page for a new user in the browser b, as openWith does in the shared
// one: the test fails if the page throws an error nobody caught or logs one.
func openIn(t *testing.T, b context.Context, s site, name string) *user {
	t.Helper()
	u := newTab(t, b, name, nil)
	// Every socket the page opens notes its URL in window.socketURLs, before the page's script
	// runs: the same WebSocket otherwise, its constants and methods inherited.
	u.do(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
			window.socketURLs = [];
			window.WebSocket = class extends WebSocket {
				constructor(...args) { super(...args); window.socketURLs.push(this.url); }
			};`})
		return err
	}))
	u.do(chromedp.Navigate(s.url()), chromedp.WaitVisible(chromedp.ID("text")))
	u.do(chromedp.SendKeys(chromedp.ID("name"), name))
	return u
}

// TestHTTPSTwoUsers: over HTTPS, the page is a secure context and follows the room over a
// WebSocket — wss, the only one an https page may open — and two users' messages, and one
// posted by a Go client trusting the certificate, reach both pages, in order.
func TestHTTPSTwoUsers(t *testing.T) {
	if browser == nil {
		t.Skip(noBrowser)
	}
	certFile, keyFile, spki, pool := tlsCert(t)
	s := startHTTPSProgram(t, build(t, ".."), certFile, keyFile)
	b := trustingBrowser(t, spki)
	alice, bob := openIn(t, b, s, "Alice"), openIn(t, b, s, "Bob")
	for _, u := range []*user{alice, bob} {
		u.waitTransport("websocket")
		if got := eval[string](u, `location.protocol + " " + window.isSecureContext`); got != "https: true" {
			t.Fatalf("the page is on %q", got)
		}
	}
	// The page's one socket, open: wss, to the page's own host and port.
	for _, u := range []*user{alice, bob} {
		if got := eval[[]string](u, `window.socketURLs`); len(got) != 1 || !strings.HasPrefix(got[0], "wss://"+s.addr+"/ws?") {
			t.Errorf("the page's sockets: %q", got)
		}
	}

	alice.say("hello over wss")
	bob.waitMessages(1)
	bob.say("hi back")
	alice.waitMessages(2)

	tlsClient := &http.Client{Timeout: coretest.Patience, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := tlsClient.Post(s.url()+"messages", "application/json", strings.NewReader(`{"name":"Gus","text":"from Go over TLS"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("POST /messages: %d", resp.StatusCode)
	}

	want := []string{"hello over wss", "hi back", "from Go over TLS"}
	for _, u := range []*user{alice, bob} {
		u.waitMessages(len(want))
		if got := u.texts(); !equal(got, want) {
			t.Errorf("the page shows %q, want %q", got, want)
		}
		if got := u.transport(); got != "websocket" {
			t.Errorf("the page follows the room by %q", got)
		}
	}
	screenshot(t, "https.png", alice, bob)
}
