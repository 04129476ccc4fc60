package browser

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestHTTPSTenTabsOneConnection: over HTTPS Chromium loads the page over HTTP/2, and ten tabs of
// one profile that follow the room with long polls — more than the six HTTP/1.1 connections a
// browser opens to one host, where the seventh tab would wait — stay live together on the one
// HTTP/2 connection: a message reaches all ten, and every poll went over h2.
func TestHTTPSTenTabsOneConnection(t *testing.T) {
	if browser == nil {
		t.Skip(noBrowser)
	}
	certFile, keyFile, spki, pool := tlsCert(t)
	s := startHTTPSProgram(t, build(t, ".."), certFile, keyFile)
	b := trustingBrowser(t, spki)
	// The sockets the tabs try first fail, as the browser reports.
	blockedSocket := func(m chromedp.ConsoleMessage) bool { return m.Source == "network" }
	var tabs []*user
	for i := range 10 {
		name := fmt.Sprintf("Tab%d", i+1)
		var u *user
		if i == 0 {
			u = newTab(t, b, name, blockedSocket) // a profile of its own, which the others share
		} else {
			u = newTabWith(t, tabs[0].ctx, name, blockedSocket)
		}
		blockSockets(u) // long polls: what a page without sockets keeps open
		u.do(chromedp.Navigate(s.url()), chromedp.WaitVisible(chromedp.ID("text")))
		tabs = append(tabs, u)
	}
	for _, u := range tabs {
		u.waitTransport("long-poll")
		if got := eval[string](u, `performance.getEntriesByType("navigation")[0].nextHopProtocol`); got != "h2" {
			t.Fatalf("the page came over %q", got)
		}
	}
	tlsClient := &http.Client{Timeout: coretest.Patience, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := tlsClient.Post(s.url()+"messages", "application/json", strings.NewReader(`{"name":"Gus","text":"to every tab"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("POST /messages: %d", resp.StatusCode)
	}
	for _, u := range tabs {
		u.waitMessages(1)
		if got := u.texts(); !equal(got, []string{"to every tab"}) {
			t.Errorf("%q", got)
		}
		protos := eval[[]string](u, `performance.getEntriesByType("resource").filter(e => e.name.includes("/messages?after=")).map(e => e.nextHopProtocol)`)
		for _, p := range protos {
			if p != "h2" {
				t.Errorf("a poll went over %q", p)
			}
		}
	}
}

// TestHTTPSWebSocketsOverH2: over HTTPS the page's WebSocket rides the page's HTTP/2 connection
// (RFC 8441's extended CONNECT, which the server's SETTINGS allow): Chromium reports each
// handshake answered with 200 (an HTTP/1.1 upgrade is answered 101) and no
// Sec-WebSocket-Accept, for ten tabs of one profile at once, and a message said in one tab
// reaches all ten over their WebSockets.
func TestHTTPSWebSocketsOverH2(t *testing.T) {
	if browser == nil {
		t.Skip(noBrowser)
	}
	certFile, keyFile, spki, _ := tlsCert(t)
	s := startHTTPSProgram(t, build(t, ".."), certFile, keyFile)
	b := trustingBrowser(t, spki)
	var mu sync.Mutex
	var handshakes []*network.WebSocketResponse
	var tabs []*user
	for i := range 10 {
		name := fmt.Sprintf("Tab%d", i+1)
		var u *user
		if i == 0 {
			u = newTab(t, b, name, nil) // a profile of its own, which the others share
		} else {
			u = newTabWith(t, tabs[0].ctx, name, nil)
		}
		err := chromedp.Listen(u.ctx, func(ev any) {
			if e, ok := ev.(*network.EventWebSocketHandshakeResponseReceived); ok {
				mu.Lock()
				handshakes = append(handshakes, e.Response)
				mu.Unlock()
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		u.do(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{})
			return err
		}))
		u.do(chromedp.Navigate(s.url()), chromedp.WaitVisible(chromedp.ID("text")))
		u.do(chromedp.SendKeys(chromedp.ID("name"), name))
		tabs = append(tabs, u)
	}
	for _, u := range tabs {
		u.waitTransport("websocket")
		if got := eval[string](u, `performance.getEntriesByType("navigation")[0].nextHopProtocol`); got != "h2" {
			t.Fatalf("the page came over %q", got)
		}
	}
	mu.Lock()
	if len(handshakes) != len(tabs) {
		t.Errorf("%d WebSocket handshakes for %d tabs", len(handshakes), len(tabs))
	}
	for _, r := range handshakes {
		if r.Status != 200 || r.Headers["sec-websocket-accept"] != nil || r.Headers["Sec-WebSocket-Accept"] != nil {
			t.Errorf("a WebSocket answered %d %s, headers %v: not over HTTP/2", r.Status, r.StatusText, r.Headers)
		}
	}
	mu.Unlock()
	tabs[0].say("to every tab over h2")
	for _, u := range tabs {
		u.waitMessages(1)
		if got := u.texts(); !equal(got, []string{"to every tab over h2"}) {
			t.Errorf("%q", got)
		}
		if got := u.transport(); got != "websocket" {
			t.Errorf("the page follows the room by %q", got)
		}
	}
}
