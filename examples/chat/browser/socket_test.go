package browser

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/dwellhttp/dwell/wait/jetstream/jetstreamtest"
)

// The page follows the room over a WebSocket (GET /ws) when one gets through, and with long
// polls when none does. These tests check each way, and the way from one to the other.

// offline is true in the page once it says it has lost the server.
const offline = `document.getElementById("status").dataset.state === "offline"`

// TestSocketTwoUsers: two users chat over WebSockets, with a burst from another client between
// their messages: each page shows every message once, in order, and neither polls at all: one
// socket each is all they ask for.
func TestSocketTwoUsers(t *testing.T) {
	s := startServer(t)
	alice, bob := open(t, s, "Alice"), open(t, s, "Bob")
	alice.waitTransport("websocket")
	bob.waitTransport("websocket")
	var want []string
	for i := range 6 {
		from := []*user{alice, bob}[i%2]
		text := fmt.Sprintf("over the socket %d", i+1)
		want = append(want, text)
		from.say(text)
		alice.waitMessages(len(want))
		bob.waitMessages(len(want))
		if i == 2 {
			for j := range 20 {
				want = append(want, fmt.Sprintf("burst %d", j+1))
				post(t, s, "Gus", want[len(want)-1])
			}
		}
	}
	for _, u := range []*user{alice, bob} {
		u.waitMessages(len(want))
		if got := u.texts(); !equal(got, want) {
			t.Errorf("the page shows %q, want %q", got, want)
		}
		if got := u.transport(); got != "websocket" {
			t.Errorf("the page follows the room by %q", got)
		}
	}
	if n := s.count("GET /messages"); n != 0 {
		t.Errorf("%d polls", n)
	}
	if n := s.count("GET /ws"); n != 2 {
		t.Errorf("%d sockets for two pages", n)
	}
}

// TestSocketReload: a page reloaded while messages are posted shows each of them once, in order,
// the earlier ones and those posted while it reloaded, and follows the room over a socket again.
func TestSocketReload(t *testing.T) {
	s := startServer(t)
	u := open(t, s, "Hal")
	u.waitTransport("websocket")
	var want []string
	for i := range 5 {
		want = append(want, fmt.Sprintf("before the reload %d", i+1))
		post(t, s, "Gus", want[i])
	}
	u.waitMessages(len(want))
	u.do(chromedp.Reload())
	for i := range 5 { // while the page opens its new socket, or before, or after
		want = append(want, fmt.Sprintf("during the reload %d", i+1))
		post(t, s, "Gus", want[len(want)-1])
	}
	u.waitFor("the page", `document.getElementById("text") !== null`)
	u.waitTransport("websocket")
	u.say("after the reload")
	want = append(want, "after the reload")
	u.waitMessages(len(want))
	if got := u.texts(); !equal(got, want) {
		t.Errorf("the page shows %q, want %q", got, want)
	}
	if got := room(t, s); !equal(got, want) {
		t.Errorf("the room has %q", got)
	}
}

// TestSocketRestart: the server stops while the page follows it over a socket, and comes back
// as a new room; a message posted to it at once shows on the page, after the line that says the
// server started over, and the page follows the new room over a socket again.
func TestSocketRestart(t *testing.T) {
	s := startServer(t)
	u := open(t, s, "Carol")
	u.waitTransport("websocket")
	u.say("before the restart")
	u.waitMessages(1)

	s.stop()
	u.waitFor("offline", offline)
	s.start()
	post(t, s, "Dan", "as soon as the server is back")
	u.waitMessages(2)
	u.waitTransport("websocket")
	u.say("welcome back")
	u.waitMessages(3)
	if got, want := logLines(u), []string{"before the restart", "—", "as soon as the server is back", "welcome back"}; !equal(got, want) {
		t.Errorf("the page shows %q, want %q", got, want)
	}
	if got, want := room(t, s), []string{"as soon as the server is back", "welcome back"}; !equal(got, want) {
		t.Errorf("the room has %q, want %q", got, want)
	}
}

// TestSocketFallbackBlocked: a page whose sockets the browser blocks follows the room with long
// polls; it chats with a page on a socket, each seeing every message in order, and none of its
// sockets reaches the server.
func TestSocketFallbackBlocked(t *testing.T) {
	s := startServer(t)
	alice, bob := openWith(t, s, "Alice", blockSockets), open(t, s, "Bob")
	alice.waitTransport("long-poll")
	bob.waitTransport("websocket")
	var want []string
	for i := range 6 {
		from := []*user{alice, bob}[i%2]
		want = append(want, fmt.Sprintf("message %d", i+1))
		from.say(want[i])
		alice.waitMessages(len(want))
		bob.waitMessages(len(want))
	}
	for _, u := range []*user{alice, bob} {
		if got := u.texts(); !equal(got, want) {
			t.Errorf("the page shows %q, want %q", got, want)
		}
	}
	if got := alice.transport(); got != "long-poll" {
		t.Errorf("the page without sockets follows the room by %q", got)
	}
	if n := s.count("GET /ws"); n != 1 {
		t.Errorf("%d sockets reached the server, want Bob's alone", n)
	}
}

// TestSocketFallbackRefused: a server whose sockets are refused (a proxy that passes no upgrade)
// is followed with long polls, once a second socket has failed while a poll succeeded between
// them, and no socket is tried after that; once the server comes back with its sockets, the
// page follows it over a socket again, and polls no more.
func TestSocketFallbackRefused(t *testing.T) {
	s := startServer(t)
	s.refuseSockets(true)
	u := open(t, s, "Ivy")
	u.waitTransport("long-poll")
	u.say("over long polls")
	u.waitMessages(1)
	post(t, s, "Jo", "to the long poll")
	u.waitMessages(2)
	if n := s.count("GET /ws"); n != 2 {
		t.Errorf("%d sockets tried, want 2", n)
	}

	s.stop()
	u.waitFor("offline", offline)
	s.refuseSockets(false)
	s.start()
	u.waitTransport("websocket")
	polls := s.count("GET /messages")
	post(t, s, "Jo", "over the socket")
	u.waitMessages(3)
	u.say("me too")
	u.waitMessages(4)
	if got, want := logLines(u), []string{"over long polls", "to the long poll", "—", "over the socket", "me too"}; !equal(got, want) {
		t.Errorf("the page shows %q, want %q", got, want)
	}
	if n := s.count("GET /messages") - polls; n != 0 {
		t.Errorf("%d polls once on the socket", n)
	}
}

// TestSocketClusterCatchUp: two instances of examples/chatcluster share a stream, a page on each,
// both on sockets; every message reaches both pages, whichever instance took it. Alice's
// instance is killed (SIGKILL) and, while it is down, three messages go to the other; started
// again, it is the same history, and Alice's page goes on from its cursor: the three messages
// once each, in order, and no line of a new history; the two chat on.
func TestSocketClusterCatchUp(t *testing.T) {
	if browser == nil {
		t.Skip(noBrowser)
	}
	url := jetstreamtest.New(t).URL()
	bin := build(t, "../../chatcluster")
	a := startProgram(t, bin, "-nats", url, "-stream", "room", "-loops", "2")
	b := startProgram(t, bin, "-nats", url, "-stream", "room", "-loops", "2")
	alice, bob := open(t, a, "Alice"), open(t, b, "Bob")
	alice.waitTransport("websocket")
	bob.waitTransport("websocket")
	alice.say("one")
	bob.waitMessages(1)
	bob.say("two")
	alice.waitMessages(2)

	a.kill()
	alice.waitFor("offline", offline)
	want := []string{"one", "two"}
	for i := range 3 {
		want = append(want, fmt.Sprintf("while A was down %d", i+1))
		post(t, b, "Carol", want[len(want)-1])
	}
	bob.waitMessages(len(want))
	a.start()
	alice.waitMessages(len(want))
	alice.waitTransport("websocket")
	bob.say("A is back")
	alice.waitMessages(len(want) + 1)
	alice.say("and so am I")
	want = append(want, "A is back", "and so am I")
	for _, u := range []*user{alice, bob} {
		u.waitMessages(len(want))
		u.waitFor("an empty outbox", `document.querySelector("#outbox li") === null`)
		if got := logLines(u); !equal(got, want) {
			t.Errorf("the page shows %q, want %q", got, want)
		}
	}
	for _, p := range []*program{a, b} {
		if got := room(t, p); !equal(got, want) {
			t.Errorf("%s has %q, want %q", p.addr, got, want)
		}
	}
}

// TestSocketCrash: the chat process is killed (SIGKILL) under two pages on sockets, and started
// again on its address: a new history. The pages notice at once (their sockets break), start
// over when it is back, and show the message it took first, once each, after the line that says
// the server started over; they follow it over sockets again and go on chatting.
func TestSocketCrash(t *testing.T) {
	if browser == nil {
		t.Skip(noBrowser)
	}
	p := startProgram(t, build(t, ".."), "-loops", "2")
	alice, bob := open(t, p, "Alice"), open(t, p, "Bob")
	alice.waitTransport("websocket")
	bob.waitTransport("websocket")
	alice.say("hello")
	bob.waitMessages(1)
	bob.say("hi")
	alice.waitMessages(2)
	bob.waitMessages(2)

	p.kill()
	for _, u := range []*user{alice, bob} {
		u.waitFor("offline", offline)
	}
	p.start()
	post(t, p, "Carol", "the first of the new process")
	alice.waitMessages(3)
	bob.waitMessages(3)
	alice.waitTransport("websocket")
	bob.waitTransport("websocket")
	alice.say("still there?")
	bob.waitMessages(4)
	bob.say("yes")
	want := []string{"hello", "hi", "—", "the first of the new process", "still there?", "yes"}
	for _, u := range []*user{alice, bob} {
		u.waitMessages(5)
		u.waitFor("an empty outbox", `document.querySelector("#outbox li") === null`)
		if got := logLines(u); !equal(got, want) {
			t.Errorf("the page shows %q, want %q", got, want)
		}
	}
	if got := room(t, p); !equal(got, want[3:]) {
		t.Errorf("the room has %q, want %q", got, want[3:])
	}
}
