package browser

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// After a crash the pages must be able to send again: TestCrash and TestSocketCrash check that
// they start over; these tests check that every message typed after the restart, on any page,
// reaches every other page, over sockets and over long polls, and with many pages listening,
// even from a page that failed to send while the server was down.

// A crashTransport is a way for the pages to follow the room: the setup of each page, and the
// transport it then says it uses.
type crashTransport struct {
	name  string
	setup []func(*user)
}

var crashTransports = []crashTransport{
	{"websocket", nil},
	{"long-poll", []func(*user){blockSockets}},
}

// notSent is true in the page once a message of its outbox is marked not sent.
const notSent = `document.querySelector("#outbox li.failed") !== null`

// crash kills the program (SIGKILL) under the pages and waits until each says it is offline;
// then the first page sends a message, which fails and is marked not sent. It starts the
// program again and waits until each page follows it again, live, the given way.
func crash(p *program, transport, whileDown string, pages ...*user) {
	p.t.Helper()
	p.kill()
	for _, u := range pages {
		u.waitFor("offline", offline)
	}
	pages[0].say(whileDown)
	pages[0].waitFor("the message marked not sent", notSent)
	if got := outbox(pages[0]); !equal(got, []string{whileDown + " | Not sent: no connection to the server.RetryEdit"}) {
		p.t.Fatalf("while the server is down, the outbox shows %q", got)
	}
	p.start()
	for _, u := range pages {
		u.waitTransport(transport)
	}
}

// typed is one thing a user types after the crash, the message it makes, and what the page
// then says of the input.
type typed struct {
	keys   []chromedp.Action[chromedp.Void] // what is typed in the box, then Enter
	text   string                           // the message the room gets
	notice string
}

// afterCrash is what each user types after the crash: a plain line, a line that looks like
// HTML, a line sent with Enter pressed twice (the second Enter, on an empty box, sends nothing
// and says so), and lines with a blank line between them (Shift+Enter twice).
func afterCrash(who string) []typed {
	plain := who + ": a plain line"
	html := "<b>x</b> from " + who
	twice := who + ": Enter twice"
	lines := who + ":\n\nlines"
	return []typed{
		{[]chromedp.Action[chromedp.Void]{chromedp.KeyEvent(plain)}, plain, ""},
		{[]chromedp.Action[chromedp.Void]{chromedp.KeyEvent(html)}, html, ""},
		{[]chromedp.Action[chromedp.Void]{chromedp.KeyEvent(twice), enter}, twice, "Nothing to send: the message is empty."},
		{[]chromedp.Action[chromedp.Void]{chromedp.KeyEvent(who + ":"), shiftEnter, shiftEnter, chromedp.KeyEvent("lines")}, lines, ""},
	}
}

// TestCrashThenSend: the chat process is killed (SIGKILL) under two pages, and Alice sends a
// message, which is marked not sent; the process is started again. Once both pages follow it
// again, each sends a plain line, one that looks like HTML, one with Enter pressed twice and
// one with a blank line, each while the other page listens: every message reaches the other
// page, as text, in order, though Alice's message from before is still marked not sent. Retried,
// that one reaches Bob too, and the room has each message once. Over sockets and over long
// polls.
func TestCrashThenSend(t *testing.T) {
	if browser == nil {
		t.Skip(noBrowser)
	}
	for _, tr := range crashTransports {
		t.Run(tr.name, func(t *testing.T) {
			p := startProgram(t, build(t, ".."), "-loops", "2")
			alice := openWith(t, p, "Alice", tr.setup...)
			bob := openWith(t, p, "Bob", tr.setup...)
			alice.waitTransport(tr.name)
			bob.waitTransport(tr.name)
			alice.say("before the crash")
			bob.waitMessages(1)
			alice.waitMessages(1)

			const whileDown = "while the server is down"
			crash(p, tr.name, whileDown, alice, bob)
			want := []string{"before the crash", "—"}
			var inRoom []string
			for _, from := range []struct {
				u    *user
				name string
			}{{alice, "Alice"}, {bob, "Bob"}} {
				for _, m := range afterCrash(from.name) {
					from.u.do(chromedp.Focus(chromedp.ID("text")))
					for _, k := range m.keys {
						from.u.do(k)
					}
					from.u.do(enter)
					if got := from.u.notice(); got != m.notice {
						t.Errorf("after %q, the notice says %q, want %q", m.text, got, m.notice)
					}
					want = append(want, m.text)
					inRoom = append(inRoom, m.text)
					for _, u := range []*user{alice, bob} {
						u.waitMessages(len(want) - 1)
					}
				}
			}
			if got := outbox(alice); !equal(got, []string{whileDown + " | Not sent: no connection to the server.RetryEdit"}) {
				t.Errorf("Alice's outbox shows %q", got)
			}

			alice.do(chromedp.Click(chromedp.CSS("#outbox li.failed button:nth-of-type(1)")))
			want = append(want, whileDown)
			inRoom = append(inRoom, whileDown)
			for _, u := range []*user{alice, bob} {
				u.waitMessages(len(want) - 1)
				u.waitFor("an empty outbox", `document.querySelector("#outbox li") === null`)
				if got := logLines(u); !equal(got, want) {
					t.Errorf("the page shows %q, want %q", got, want)
				}
				if eval[bool](u, `document.querySelector("#log b") !== null`) {
					t.Errorf("the page rendered HTML from a message")
				}
			}
			if got := room(t, p); !equal(got, inRoom) {
				t.Errorf("the room has %q, want %q", got, inRoom)
			}
		})
	}
}

// TestCrashTwentyListen: twenty pages follow the room when the process is killed (SIGKILL); the
// first sends a message, which is marked not sent, and the process is started again. Once all
// follow it again, a message typed in the first page reaches all twenty, and so does one typed
// in the last.
func TestCrashTwentyListen(t *testing.T) {
	if browser == nil {
		t.Skip(noBrowser)
	}
	p := startProgram(t, build(t, ".."), "-loops", "2")
	var pages []*user
	for i := range 20 {
		pages = append(pages, open(t, p, fmt.Sprintf("User %d", i+1)))
	}
	for _, u := range pages {
		u.waitTransport("websocket")
	}
	pages[0].say("before the crash")
	for _, u := range pages {
		u.waitMessages(1)
	}

	crash(p, "websocket", "while the server is down", pages...)
	want := []string{"before the crash", "—"}
	for _, i := range []int{0, 19} {
		text := fmt.Sprintf("to all twenty, from User %d", i+1)
		pages[i].say(text)
		want = append(want, text)
		for _, u := range pages {
			u.waitMessages(len(want) - 1)
		}
	}
	for i, u := range pages {
		if got := logLines(u); !equal(got, want) {
			t.Errorf("page %d shows %q, want %q", i+1, got, want)
		}
	}
	if got := room(t, p); !equal(got, want[2:]) {
		t.Errorf("the room has %q, want %q", got, want[2:])
	}
}
