package browser

import (
	"context"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/wait/jetstream/jetstreamtest"
	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
)

// recreateStream deletes the stream and creates it again as it was, as an operator who empties
// the room that way would: the new stream numbers its messages from 1.
func recreateStream(t *testing.T, url, name string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), coretest.Patience)
	defer cancel()
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(ctx, name); err != nil {
		t.Fatal(err)
	}
	jetstreamtest.CreateStream(t, js, st.CachedInfo().Config)
}

// TestStreamRecreated: two instances of examples/chatcluster share a stream, with a page on
// each. The stream is deleted and created again; the pages start over, and a message sent at
// once (perhaps before the instances have noticed) shows once on both, in the new history, as
// does the answer.
func TestStreamRecreated(t *testing.T) {
	if browser == nil {
		t.Skip(noBrowser)
	}
	url := jetstreamtest.New(t).URL()
	bin := build(t, "../../chatcluster")
	a := startProgram(t, bin, "-nats", url, "-stream", "room", "-loops", "2")
	b := startProgram(t, bin, "-nats", url, "-stream", "room", "-loops", "2")
	alice, bob := open(t, a, "Alice"), open(t, b, "Bob")
	alice.waitLive()
	bob.waitLive()
	alice.say("before")
	bob.waitMessages(1)
	bob.say("still before")
	alice.waitMessages(2)
	bob.waitMessages(2)

	start := time.Now()
	recreateStream(t, url, "room")
	alice.say("right after")
	bob.waitMessages(3)
	bob.say("and back")
	alice.waitMessages(4)
	bob.waitMessages(4)
	t.Logf("both pages in the new history %v after the stream was deleted", time.Since(start).Round(time.Millisecond))
	for _, u := range []*user{alice, bob} {
		u.waitFor("an empty outbox", `document.querySelector("#outbox li") === null`)
		if got, want := logLines(u), []string{"before", "still before", "—", "right after", "and back"}; !equal(got, want) {
			t.Errorf("the page shows %q, want %q", got, want)
		}
	}
	screenshot(t, "recreated.png", alice, bob)
	for _, s := range []*program{a, b} {
		if got, want := room(t, s), []string{"right after", "and back"}; !equal(got, want) {
			t.Errorf("%s has %q, want %q", s.addr, got, want)
		}
	}
}
