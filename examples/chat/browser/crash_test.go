package browser

import (
	"testing"
)

// logLines is what the page's log shows: each message's text, and "—" for the line that says
// the server started over.
func logLines(u *user) []string {
	return eval[[]string](u, `[...document.querySelectorAll("#log > li")].map(li =>
		li.classList.contains("restart") ? "—" : li.querySelector(".bubble").textContent)`)
}

// sentState is true in the page once a message of its outbox is sent, and not yet shown.
const sentState = `[...document.querySelectorAll("#outbox .state")].some(s => s.textContent === "sent")`

// TestCrash: the chat process is killed (SIGKILL) while two pages are open, and started again on
// its address; it numbers its messages from 1 again, behind the pages' cursors. Both pages start
// over: what they showed stays, above a line that says the server started over; a message that
// the dead process took and no page saw is sent again, and shows once; one that the new process
// took while the pages could not poll shows once, where it belongs; and the two go on chatting.
// The pages follow the room with long polls (their sockets blocked): the test needs a network
// that drops what the pages hear, and a socket that goes silent is noticed only after a minute.
// TestSocketCrash kills the process under pages on sockets.
func TestCrash(t *testing.T) {
	if browser == nil {
		t.Skip(noBrowser)
	}
	p := startProgram(t, build(t, ".."), "-loops", "2")
	alice, bob := openWith(t, p, "Alice", blockSockets), openWith(t, p, "Bob", blockSockets)
	alice.waitTransport("long-poll")
	bob.waitTransport("long-poll")
	alice.say("hello")
	bob.waitMessages(1)
	bob.say("hi")
	alice.waitMessages(2)
	bob.waitMessages(2)

	// The pages stop hearing from the server. A poll waiting there goes on: Carol's message
	// ends it, unless it had ended already; the next ones are cut.
	alice.cutPolls(true)
	bob.cutPolls(true)
	post(t, p, "Carol", "are you two there?")
	before := map[*user][]string{}
	for _, u := range []*user{alice, bob} {
		u.waitFor("offline", `document.getElementById("status").dataset.state === "offline"`)
		before[u] = append(logLines(u), "—")
	}
	alice.say("taken by the old process")
	alice.waitFor("the message sent", sentState)

	p.kill()
	p.start()
	bob.say("taken by the new process")
	bob.waitFor("the message sent", sentState)
	alice.cutPolls(false)
	bob.cutPolls(false)

	after := []string{"taken by the new process", "taken by the old process"}
	for _, view := range []struct {
		u    *user
		name string
		own  string // the text of the user's own message after the restart
	}{{alice, "Alice", after[1]}, {bob, "Bob", after[0]}} {
		u := view.u
		u.waitMessages(len(before[u]) - 1 + len(after))
		u.waitFor("an empty outbox", `document.querySelector("#outbox li") === null`)
		if got, want := logLines(u), append(before[u], after...); !equal(got, want) {
			t.Errorf("%s's page shows %q, want %q", view.name, got, want)
		}
		for _, m := range u.messages()[len(before[u])-1:] {
			if m.Own != (m.Text == view.own) {
				t.Errorf("%s's page shows %+v", view.name, m)
			}
		}
	}
	screenshot(t, "crash.png", alice, bob)

	alice.say("still there?")
	bob.waitMessages(len(before[bob]) + 2)
	bob.say("yes")
	after = append(after, "still there?", "yes")
	for _, u := range []*user{alice, bob} {
		u.waitMessages(len(before[u]) - 1 + len(after))
		if got, want := logLines(u), append(before[u], after...); !equal(got, want) {
			t.Errorf("the page shows %q, want %q", got, want)
		}
	}
	if got := room(t, p); !equal(got, after) {
		t.Errorf("the room has %q, want %q", got, after)
	}
}
