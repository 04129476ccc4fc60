package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// patience bounds each wait for the page: generous, for a loaded machine. The waits that the
// page promises to keep short measure their own time.
const patience = 20 * time.Second

// A user is one person with the chat page open: a browser context of their own (their own
// localStorage) with one tab.
type user struct {
	t   *testing.T
	ctx context.Context

	mu      sync.Mutex
	console []chromedp.ConsoleMessage

	blocked map[string]map[string]bool // URL pattern → why it is blocked (see block)
}

// open opens the chat page for a new user, who types name into the name field (none when
// empty). The test fails if the page throws an error nobody caught, or logs an error other
// than a failed request.
func open(t *testing.T, s site, name string) *user {
	t.Helper()
	return openWith(t, s, name)
}

// openWith opens the chat page as open does, after running setup in the new tab: blocking URLs,
// say.
func openWith(t *testing.T, s site, name string, setup ...func(u *user)) *user {
	t.Helper()
	if browser == nil {
		t.Skip(noBrowser)
	}
	who := name
	if who == "" {
		who = "an anonymous user"
	}
	// Requests that fail while the server is down are logged by the browser itself.
	u := newTab(t, browser, who, func(m chromedp.ConsoleMessage) bool { return m.Source == "network" })
	for _, f := range setup {
		f(u)
	}
	u.do(chromedp.Navigate(s.url()), chromedp.WaitVisible(chromedp.ID("text")))
	if name != "" {
		u.do(chromedp.SendKeys(chromedp.ID("name"), name))
	}
	return u
}

// newTab opens a tab in a new browser context of b (its own cookies and storage), and follows
// its console. When the test ends the tab closes, and an exception or a console error the tab
// logged fails the test, unless expected says it is one of those the test causes (nil: none).
func newTab(t *testing.T, b context.Context, who string, expected func(chromedp.ConsoleMessage) bool) *user {
	t.Helper()
	return newTabWith(t, b, who, expected, chromedp.WithNewBrowserContext())
}

// newTabWith is newTab with the options of chromedp.NewContext: with none, and a tab's context
// as b, the tab opens in the same browser context as that tab (its cookies, its connections).
func newTabWith(t *testing.T, b context.Context, who string, expected func(chromedp.ConsoleMessage) bool, opts ...chromedp.ContextOption) *user {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b, opts...)
	u := &user{t: t, ctx: ctx, blocked: map[string]map[string]bool{}}
	// Following the console also enables the page's runtime, which evaluating scripts needs.
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			u.mu.Lock()
			u.console = append(u.console, m)
			u.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		u.mu.Lock()
		defer u.mu.Unlock()
		for _, m := range u.console {
			if m.IsException() || m.Type == chromedp.ConsoleError && (expected == nil || !expected(m)) {
				t.Errorf("%s's console: %s", who, m)
			}
		}
	})
	return u
}

// The URLs of the page's polls and sockets, as network.BlockPattern's patterns.
const (
	pollURLs   = "*://*:*/messages?after=*"
	socketURLs = "*://*:*/ws?*"
)

// block makes the browser refuse the URLs of the patterns before they leave it, as a network
// or a proxy that drops them would (on), or stops refusing them (off), for the given reason: a
// pattern blocked for several reasons stays blocked until each is lifted. A request already
// made is not cut. Polls are blocked as DevTools blocks a request (Network.setBlockedURLs);
// sockets, which that does not block, are taken offline (Network.emulateNetworkConditionsByRule):
// a new one fails, and one already open stays open but hears nothing until it is let through
// again.
func (u *user) block(on bool, why string, patterns ...string) {
	u.t.Helper()
	for _, p := range patterns {
		if u.blocked[p] == nil {
			u.blocked[p] = map[string]bool{}
		}
		if on {
			u.blocked[p][why] = true
		} else {
			delete(u.blocked[p], why)
		}
	}
	var urls []*network.BlockPattern
	rules := []*network.Conditions{} // none: every request as it is
	for p, whys := range u.blocked {
		switch {
		case len(whys) == 0:
		case p == socketURLs:
			rules = append(rules, &network.Conditions{URLPattern: p, Offline: true, DownloadThroughput: -1, UploadThroughput: -1})
		default:
			urls = append(urls, &network.BlockPattern{URLPattern: p, Block: true})
		}
	}
	u.do(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, network.SetBlockedURLs, network.SetBlockedURLsParams{URLPatterns: urls}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, emulateByRule, emulateByRuleParams{Offline: len(rules) > 0, MatchedNetworkConditions: rules})
		return err
	}))
}

// emulateByRuleParams are Network.emulateNetworkConditionsByRule's parameters as Chromium takes
// them on both sides of a change in the protocol. Chromium 148 (Debian's package when this was
// written) wants offline as a parameter of the command, required, for the requests the rules
// match: without it the command is refused ("Invalid parameters"), and the rules' own offline
// is not heard. Later versions take offline in each rule, and keep the command's as
// deprecated. cdproto has the later form alone; every rule block sets is offline, so it says
// so in both places.
type emulateByRuleParams struct {
	Offline                  bool                  `json:"offline"`
	MatchedNetworkConditions []*network.Conditions `json:"matchedNetworkConditions"`
}

var emulateByRule = cdp.Command[emulateByRuleParams, network.EmulateNetworkConditionsByRuleResult]{
	Method: network.CommandEmulateNetworkConditionsByRule,
}

// blockSockets makes every WebSocket of the page fail before it leaves the browser, for the
// length of the test: a setup for openWith.
func blockSockets(u *user) { u.block(true, "no sockets", socketURLs) }

// transport is how the page says it follows the room: "websocket" or "long-poll" ("" before it
// knows).
func (u *user) transport() string {
	return eval[string](u, `document.getElementById("status").dataset.transport ?? ""`)
}

// waitTransport waits until the page follows the room the given way, and is live.
func (u *user) waitTransport(name string) {
	u.t.Helper()
	u.waitFor(name, `document.getElementById("status").dataset.transport === "`+name+
		`" && document.getElementById("status").textContent === "live"`)
}

// do runs actions in the user's tab.
func (u *user) do(actions ...chromedp.Action[chromedp.Void]) {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(u.ctx, patience)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		u.t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression in the page and decodes its value into a T.
func eval[T any](u *user, expr string) T {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(u.ctx, patience)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		u.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitFor waits until the JavaScript expression cond is true in the page.
func (u *user) waitFor(what, cond string) {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(u.ctx, patience+time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(patience)))
	if err != nil {
		u.t.Fatalf("waiting for %s (%s): %v; the page says %q and shows %+v",
			what, cond, err, u.status(), u.messages())
	}
}

// status is what the page says of its connection.
func (u *user) status() string {
	return eval[string](u, `document.getElementById("status").textContent`)
}

func (u *user) waitLive() {
	u.t.Helper()
	u.waitFor("live", `document.getElementById("status").textContent === "live"`)
}

// say types text in the message box and presses Enter.
func (u *user) say(text string) {
	u.t.Helper()
	u.do(chromedp.Focus(chromedp.ID("text")), chromedp.KeyEvent(text), enter)
}

// enter presses Enter in the focused element as a keyboard does: a key down with the text
// "\r", which becomes a line break unless the page cancels the key down, and a key up.
// (chromedp's "\n" sends the line break as a separate char event, which no cancel stops.)
var enter = pressEnter(0)

// shiftEnter presses Shift+Enter as enter presses Enter: the page lets it make a line break.
var shiftEnter = pressEnter(8)

// pressEnter presses Enter with the modifier keys mods held (DevTools' bits: 8 is Shift).
func pressEnter(mods int64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
			params := input.DispatchKeyEventParams{Type: typ, Modifiers: mods, Key: "Enter", Code: "Enter",
				WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}
			if typ == input.DispatchKeyEventTypeKeyDown {
				params.Text, params.UnmodifiedText = "\r", "\r"
			}
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, params); err != nil {
				return err
			}
		}
		return nil
	})
}

// pasteAndSend pastes text in the message box and presses Enter: quicker than typing a long one.
func (u *user) pasteAndSend(text string) {
	u.t.Helper()
	u.paste(text)
	u.do(chromedp.Focus(chromedp.ID("text")), enter)
}

// paste puts text in the message box at once, as a paste does.
func (u *user) paste(text string) {
	u.t.Helper()
	b, _ := json.Marshal(text)
	u.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
		`(() => { const t = document.getElementById("text"); t.value = %s; t.dispatchEvent(new Event("input")); })()`, b)))
}

// input is what the message box holds.
func (u *user) input() string {
	return eval[string](u, `document.getElementById("text").value`)
}

// notice is the page's message about the input.
func (u *user) notice() string {
	return eval[string](u, `document.getElementById("notice").textContent`)
}

// A shown message is one in the page's log, as the user sees it.
type shown struct {
	Author string `json:"author"`
	Text   string `json:"text"`
	Time   string `json:"time"` // the datetime of its time element
	Clock  string `json:"clock"`
	Own    bool   `json:"own"`
}

func (u *user) messages() []shown {
	return eval[[]shown](u, `[...document.querySelectorAll("#log .msg")].map(li => ({
		author: li.querySelector(".author").textContent,
		text: li.querySelector(".bubble").textContent,
		time: li.querySelector("time")?.dateTime ?? "",
		clock: li.querySelector("time")?.textContent ?? "",
		own: li.classList.contains("own"),
	}))`)
}

// texts are the texts of the messages shown, in order.
func (u *user) texts() []string {
	var texts []string
	for _, m := range u.messages() {
		texts = append(texts, m.Text)
	}
	return texts
}

// waitMessages waits until the page shows n messages.
func (u *user) waitMessages(n int) []shown {
	u.t.Helper()
	u.waitFor(fmt.Sprintf("%d messages", n), fmt.Sprintf(`document.querySelectorAll("#log .msg").length >= %d`, n))
	return u.messages()
}

// overflow reports by how many pixels the page is wider than the window, if at all.
func (u *user) overflow() int {
	return eval[int](u, `Math.max(document.documentElement.scrollWidth - document.documentElement.clientWidth,
		document.getElementById("scroll").scrollWidth - document.getElementById("scroll").clientWidth, 0)`)
}

func equal(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}
