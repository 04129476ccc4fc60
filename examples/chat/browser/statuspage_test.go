package browser

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/router"
	"github.com/dwellhttp/dwell/statuspage"
)

// startStatusServer serves "hello" at / and the status page at /debug/dwell, as an
// application mounts it (see package statuspage), until the test ends.
func startStatusServer(t *testing.T) (*core.Server, string) {
	t.Helper()
	r := router.New()
	r.GET("/", func(c *core.Ctx) { c.WriteString("hello") })
	var status core.Handler
	r.GET("/debug/dwell", func(c *core.Ctx) { status(c) })
	s := core.NewServer(r.Handler(), core.Options{
		Addr:   "127.0.0.1:0",
		Loops:  2,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	status = statuspage.Handler(s, statuspage.Options{}) // before the server starts
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	go s.ListenAndServe()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s, s.Addr().String()
}

// openStatusPage opens url in a new browser context. The test fails if the page throws an
// error nobody caught or logs one: a script or a style its Content Security Policy refused
// would say so there.
func openStatusPage(t *testing.T, url string) *user {
	t.Helper()
	if browser == nil {
		t.Skip(noBrowser)
	}
	u := newTab(t, browser, "the status page", nil)
	u.do(chromedp.Navigate(url), chromedp.WaitVisible(chromedp.ID("open")))
	return u
}

// shownOpen is the open-connections figure the page shows; -1 while it shows none.
func shownOpen(u *user) int {
	u.t.Helper()
	text := eval[string](u, `document.getElementById("open").textContent`)
	n, err := strconv.Atoi(strings.ReplaceAll(text, ",", ""))
	if err != nil {
		return -1
	}
	return n
}

// waitShowsServer waits until the page shows the server's count of open connections, as the
// server has it, and returns it; cond must hold for the server's statistics too.
func waitShowsServer(t *testing.T, u *user, s *core.Server, what string, cond func(core.LoopStats) bool) int {
	t.Helper()
	var shown int
	var st core.LoopStats
	coretest.WaitFor(t, what, func() bool {
		shown, st = shownOpen(u), s.Stats().Total
		return shown == st.Conns.Open && cond(st)
	})
	return shown
}

// TestStatusPage: the status page, in Chromium, shows the server's open connections, follows
// them over its event stream as more open, and draws its chart; its script and style load
// under its Content Security Policy.
func TestStatusPage(t *testing.T) {
	s, addr := startStatusServer(t)
	u := openStatusPage(t, "http://"+addr+"/debug/dwell")
	u.waitFor("the stream live", `document.getElementById("status").textContent === "live"`)
	if got := eval[string](u, `getComputedStyle(document.getElementById("open")).fontVariantNumeric`); got != "tabular-nums" {
		t.Errorf("the style is not applied: the figures' font-variant-numeric is %q", got)
	}

	// The page's own connections (the document, its assets, its stream) settle; the page then
	// shows what the server counts. The stream is one of them: at least one is open.
	before := waitShowsServer(t, u, s, "the page to show the server's open connections",
		func(st core.LoopStats) bool { return st.Conns.Open >= 1 })
	accepted := s.Stats().Total.Accepted

	// Three more clients, idle between requests on kept-alive connections.
	const more = 3
	for range more {
		c := coretest.Dial(t, addr)
		c.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		if resp, body := c.Response("GET"); resp.StatusCode != 200 || body != "hello" {
			t.Fatalf("GET /: %d %q", resp.StatusCode, body)
		}
	}
	after := waitShowsServer(t, u, s, "the page to show the new connections",
		func(st core.LoopStats) bool { return st.Accepted >= accepted+more })
	if after != before+more {
		// The browser may have closed a connection of its own meanwhile; the page still shows
		// the server's count, which is what matters.
		t.Logf("open connections: %d before, %d after the %d new ones", before, after, more)
	}
	if after < more+1 {
		t.Errorf("the page shows %d open connections, with %d idle clients and its own stream", after, more)
	}
	idle := eval[string](u, `document.querySelector("#conns tfoot tr").cells[2].textContent`)
	if n, err := strconv.Atoi(idle); err != nil || n < more {
		t.Errorf("the connections table's total row shows %q idle, want at least %d", idle, more)
	}

	// The chart: a point per event, drawn as two lines, requests/s from the second event on
	// (the first has no rate).
	u.waitFor("the chart drawn", `(() => {
		const points = (id) => document.getElementById(id).getAttribute("points").trim().split(" ").filter(Boolean).length;
		return Number(document.getElementById("chart").dataset.points) >= 3 &&
			points("line-open") >= 3 && points("line-rps") >= 2 &&
			document.getElementById("line-open").getBBox().width > 0 &&
			document.getElementById("line-rps").getBBox().width > 0;
	})()`)
	screenshot(t, "status-page.png", u)
}
