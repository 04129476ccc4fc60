package browser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var client = &http.Client{Timeout: 10 * time.Second}

// post sends a message as another client of the API would.
func post(t *testing.T, s site, name, text string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"name": name, "text": text})
	resp, err := client.Post(s.url()+"messages", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("POST %q: %d", text, resp.StatusCode)
	}
}

// room returns the texts of the messages the server has.
func room(t *testing.T, s site) []string {
	t.Helper()
	resp, err := client.Get(s.url() + "messages?after=0&timeout=0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct{ Messages []struct{ Text string } }
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range r.Messages {
		texts = append(texts, m.Text)
	}
	return texts
}

// TestTwoUsersChat: two people chat; each sees every message in order, with its author's
// name and its time, their own apart from the other's, HTML as text. The page has its icon
// inline, and a reload keeps the name and which messages were one's own.
func TestTwoUsersChat(t *testing.T) {
	s := startServer(t)
	alice, bob := open(t, s, "Alice"), open(t, s, "Bob")
	alice.waitLive()
	bob.waitLive()

	conversation := []struct {
		from *user
		text string
	}{
		{alice, "Hi Bob! Does the long poll keep up?"},
		{bob, "It does: <b>10 ms</b> both ways, & no reload."},
		{alice, "Great. Here are the numbers: https://example.com/" + strings.Repeat("results", 30)},
		{bob, "Every one of them, in order."},
	}
	for i, line := range conversation {
		if len(line.text) > 100 {
			line.from.pasteAndSend(line.text)
		} else {
			line.from.say(line.text)
		}
		alice.waitMessages(i + 1)
		bob.waitMessages(i + 1)
	}
	for _, view := range []struct {
		u    *user
		name string
	}{{alice, "Alice"}, {bob, "Bob"}} {
		got := view.u.messages()
		for i, line := range conversation {
			m := got[i]
			author := map[*user]string{alice: "Alice", bob: "Bob"}[line.from]
			mine := line.from == view.u
			if mine {
				author += " (you)"
			}
			when, err := time.Parse(time.RFC3339, m.Time)
			if m.Text != line.text || m.Author != author || m.Own != mine || err != nil ||
				time.Since(when) > time.Minute || m.Clock == "" {
				t.Errorf("%s sees message %d as %+v, want %q from %q, own %v, with a time", view.name, i, m, line.text, author, mine)
			}
		}
		if eval[bool](view.u, `document.querySelector("#log b") !== null`) {
			t.Errorf("%s's page rendered HTML from a message", view.name)
		}
		if px := view.u.overflow(); px > 0 {
			t.Errorf("%s's page overflows the window by %d px", view.name, px)
		}
	}
	screenshot(t, "two-users.png", alice, bob)

	alice.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("text")))
	got := alice.waitMessages(len(conversation))
	if name := eval[string](alice, `document.getElementById("name").value`); name != "Alice" {
		t.Errorf("after a reload the name is %q", name)
	}
	for i, m := range got {
		if m.Own != (conversation[i].from == alice) {
			t.Errorf("after a reload, message %d: %+v", i, m)
		}
	}
	// The icon is in the page, so that no browser asks for /favicon.ico (headless Chromium asks
	// for none either way).
	icon, err := chromedp.Run(alice.ctx, chromedp.Evaluate[int](`new Promise(ok => {
		const link = document.querySelector('link[rel="icon"]');
		if (!link || !link.href.startsWith("data:image/")) return ok(0);
		const img = new Image();
		img.onload = () => ok(img.naturalWidth);
		img.onerror = () => ok(0);
		img.src = link.href;
	})`, chromedp.EvalAwaitPromise))
	if err != nil || icon == 0 {
		t.Errorf("no icon in the page (%v)", err)
	}
	if n := s.count("GET /favicon.ico"); n != 0 {
		t.Errorf("%d requests for /favicon.ico", n)
	}
}

// screenshot writes the users' windows side by side to the file name in the screenshot
// directory.
func screenshot(t *testing.T, name string, users ...*user) {
	t.Helper()
	var shots []image.Image
	width, height := 0, 0
	for _, u := range users {
		b, err := chromedp.Run(u.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		shots = append(shots, img)
		width += img.Bounds().Dx()
		height = max(height, img.Bounds().Dy())
	}
	const gap = 8
	out := image.NewRGBA(image.Rect(0, 0, width+gap*(len(shots)-1), height))
	draw.Draw(out, out.Bounds(), image.Black, image.Point{}, draw.Src)
	x := 0
	for _, img := range shots {
		draw.Draw(out, img.Bounds().Add(image.Pt(x, 0)), img, img.Bounds().Min, draw.Src)
		x += img.Bounds().Dx() + gap
	}
	dir := os.Getenv("DWELL_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "dwell-chat-browser")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, out); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// TestBurstInOrder: twenty messages posted back to back all arrive, in order, and a reload
// shows them again.
func TestBurstInOrder(t *testing.T) {
	s := startServer(t)
	u := open(t, s, "")
	u.waitLive()
	var want []string
	for i := range 20 {
		want = append(want, fmt.Sprintf("burst %d", i+1))
		post(t, s, "Gus", want[i])
	}
	u.waitMessages(len(want))
	if got := u.texts(); !equal(got, want) {
		t.Fatalf("the page shows %q", got)
	}
	u.do(chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("text")))
	u.waitMessages(len(want))
	if got := u.texts(); !equal(got, want) {
		t.Fatalf("after a reload the page shows %q", got)
	}
}

// TestEmptyRoomIsLive: the page of a room with no message says live at once, not when the
// first message or the end of a poll comes.
func TestEmptyRoomIsLive(t *testing.T) {
	s := startServer(t)
	start := time.Now()
	u := open(t, s, "")
	u.waitLive()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("live after %v", d)
	}
	if got := eval[string](u, `getComputedStyle(document.getElementById("log"), "::before").content`); !strings.Contains(got, "No messages yet") {
		t.Errorf("an empty room shows %s", got)
	}
}

// TestRestart: when the server stops, the page says so; when it starts again, with no message
// to wake anybody, the page says live within 5 s and chats again in the new room.
func TestRestart(t *testing.T) {
	s := startServer(t)
	u := open(t, s, "Carol")
	u.waitLive()
	u.say("before the restart")
	u.waitMessages(1)

	s.stop()
	// The second failure in a row, so that the page is backing off.
	u.waitFor("offline", `document.getElementById("status").textContent === "offline, retrying…"`)
	s.start()
	start := time.Now()
	u.waitLive()
	d := time.Since(start)
	if d > 5*time.Second {
		t.Errorf("live %v after the server came back", d)
	}
	t.Logf("live %v after the server came back", d.Round(time.Millisecond))

	post(t, s, "Dan", "after the restart")
	u.waitMessages(2)
	u.say("welcome back")
	u.waitMessages(3)
	if got, want := u.texts(), []string{"before the restart", "after the restart", "welcome back"}; !equal(got, want) {
		t.Errorf("the page shows %q, want %q", got, want)
	}
	if got, want := room(t, s), []string{"after the restart", "welcome back"}; !equal(got, want) {
		t.Errorf("the room has %q, want %q", got, want)
	}
}

// outbox is what the page shows of the messages it has not sent: each one's text and state.
func outbox(u *user) []string {
	return eval[[]string](u, `[...document.querySelectorAll("#outbox li")].map(li =>
		li.querySelector(".bubble").textContent + " | " + li.querySelector(".state").textContent)`)
}

// TestSendWhileDown: a message sent while the server is down says it was not sent, and is
// kept: Edit takes it back into the box, Retry sends it once the server is back.
func TestSendWhileDown(t *testing.T) {
	s := startServer(t)
	u := open(t, s, "Dave")
	u.waitLive()
	s.stop()
	u.waitFor("offline", `document.getElementById("status").dataset.state === "offline"`)

	const text = "are you there?"
	u.say(text)
	u.waitFor("the failure", `document.querySelector("#outbox li.failed") !== null`)
	if got := outbox(u); len(got) != 1 || !strings.HasPrefix(got[0], text+" | Not sent: no connection to the server.") ||
		!strings.HasSuffix(got[0], "RetryEdit") {
		t.Fatalf("the outbox shows %q", got)
	}
	screenshot(t, "not-sent.png", u)

	u.do(chromedp.Click(chromedp.CSS("#outbox li.failed button:nth-of-type(2)")))
	if got := u.input(); got != text {
		t.Fatalf("after Edit the box holds %q", got)
	}
	if got := outbox(u); len(got) != 0 {
		t.Fatalf("after Edit the outbox shows %q", got)
	}
	u.say("")
	u.waitFor("the failure", `document.querySelector("#outbox li.failed") !== null`)

	s.start()
	u.do(chromedp.Click(chromedp.CSS("#outbox li.failed button:nth-of-type(1)")))
	u.waitMessages(1)
	u.waitFor("an empty outbox", `document.querySelector("#outbox li") === null`)
	if got := u.messages(); got[0].Text != text || !got[0].Own {
		t.Errorf("the page shows %+v", got)
	}
	if got := room(t, s); !equal(got, []string{text}) {
		t.Errorf("the room has %q", got)
	}
}

// TestEnterTwiceSendsOnce: on a slow link, a second Enter does not send the message again, and
// what is typed while it is on its way stays in the box; sent, it follows the first.
func TestEnterTwiceSendsOnce(t *testing.T) {
	s := startServer(t)
	u := open(t, s, "Erin")
	u.waitLive()
	release := s.hold()
	u.do(chromedp.Focus(chromedp.ID("text")), chromedp.KeyEvent("only once"), enter, enter)
	select {
	case <-s.arrived:
	case <-time.After(patience):
		t.Fatal("no POST came")
	}
	u.do(chromedp.KeyEvent("typed meanwhile"))
	if got := u.input(); got != "typed meanwhile" {
		t.Fatalf("the box holds %q", got)
	}
	u.say("")
	// The second message waits for the first.
	if got := outbox(u); !equal(got, []string{"only once | sending…", "typed meanwhile | waiting…"}) {
		t.Errorf("the outbox shows %q", got)
	}
	release()
	u.waitMessages(2)
	if got, want := u.texts(), []string{"only once", "typed meanwhile"}; !equal(got, want) {
		t.Errorf("the page shows %q", got)
	}
	if got := room(t, s); !equal(got, []string{"only once", "typed meanwhile"}) {
		t.Errorf("the room has %q", got)
	}
	if n := s.count("POST /messages"); n != 2 {
		t.Errorf("%d POSTs", n)
	}
}

// TestBadInput: a blank message, a message over the limit in characters or in bytes and a name
// over its limit are refused with a message that stays while other messages arrive; the text
// is never cut.
func TestBadInput(t *testing.T) {
	s := startServer(t)
	u := open(t, s, "Frank")
	u.waitLive()

	u.say("   ")
	if got := u.notice(); got != "Nothing to send: the message is empty." {
		t.Errorf("a blank message: notice %q", got)
	}
	u.paste("")
	u.say("")
	if got := u.notice(); got != "Nothing to send: the message is empty." {
		t.Errorf("no message: notice %q", got)
	}

	long := strings.Repeat("a", 5000)
	u.paste(long)
	over := `document.getElementById("count").classList.contains("over")`
	if !eval[bool](u, over) || !strings.HasPrefix(u.notice(), "Too long to send: 5,000 characters; the limit is 2,048.") {
		t.Errorf("5000 characters: notice %q, count %q", u.notice(), eval[string](u, `document.getElementById("count").textContent`))
	}
	u.say("")
	post(t, s, "Gina", "meanwhile")
	u.waitMessages(1)
	if got := u.input(); got != long {
		t.Errorf("the box holds %d characters, want 5000", len(got))
	}
	if !strings.HasPrefix(u.notice(), "Too long to send: 5,000 characters") {
		t.Errorf("after a message came, notice %q", u.notice())
	}

	u.paste(strings.Repeat("€", 1500)) // 4500 bytes
	if got := u.notice(); !strings.HasPrefix(got, "Too long to send: 4,500 bytes; the limit is 4,096") || !eval[bool](u, over) {
		t.Errorf("1500 €: notice %q", got)
	}
	u.paste(strings.Repeat("€", 1365)) // 4095 bytes: the notice goes
	if got := u.notice(); got != "" || eval[bool](u, over) {
		t.Errorf("1365 €: notice %q", got)
	}

	u.do(chromedp.SendKeys(chromedp.ID("name"), strings.Repeat("k", 30)))
	u.say("")
	if got := u.notice(); got != "Name too long: 35 characters; the limit is 32." {
		t.Errorf("a long name: notice %q", got)
	}
	if got := room(t, s); !equal(got, []string{"meanwhile"}) {
		t.Errorf("the room has %q", got)
	}
	if n := s.count("POST /messages"); n != 1 {
		t.Errorf("%d POSTs", n)
	}
}

// TestLongWordsWrap: a 300-character word wraps, in a 900-pixel window as on a phone, whoever
// sent it.
func TestLongWordsWrap(t *testing.T) {
	s := startServer(t)
	desk, phone := open(t, s, "Hal"), open(t, s, "Ida")
	phone.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	desk.waitLive()
	phone.waitLive()
	link := "https://example.com/" + strings.Repeat("x", 280)
	desk.pasteAndSend(link)
	phone.pasteAndSend(link)
	for _, u := range []*user{desk, phone} {
		u.waitMessages(2)
		if px := u.overflow(); px > 0 {
			t.Errorf("the page overflows by %d px", px)
		}
	}
	screenshot(t, "phone.png", phone)
}
