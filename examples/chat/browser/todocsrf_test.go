package browser

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestTodoCrossOrigin: examples/todo in Chromium. A page of another site posting to its API —
// a script's fetch and a form, the forgeries a visitor's browser can be made to send — is
// refused and changes nothing; a page of the API's own origin posts and is answered.
func TestTodoCrossOrigin(t *testing.T) {
	if browser == nil {
		t.Skip(noBrowser)
	}
	p := startProgram(t, build(t, "../../todo"))
	api := "http://" + p.addr // 127.0.0.1: another site than localhost
	// A todo to attach a file to: an upload takes any body, so a forged one would be stored
	// but for the protection.
	if resp, err := http.Post(api+"/todos", "application/json", strings.NewReader(`{"title":"target"}`)); err != nil || resp.StatusCode != 201 {
		t.Fatalf("POST /todos: %v %v", resp, err)
	}

	// The other site: a page on localhost that posts to the API as soon as it loads.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	evil := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form id="f" method="POST" action="%[1]s/todos" enctype="text/plain">
<input name='{"title":"by form","x":"' value='"}'></form>
<script>
fetch("%[1]s/todos/1/attachment", {method: "POST", mode: "no-cors", body: "forged"})
	.then(() => { window.fetched = "sent"; }, (e) => { window.fetched = "failed: " + e; });
</script>`, api)
	})}
	go evil.Serve(ln)
	t.Cleanup(func() { evil.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	evilURL := "http://localhost:" + port + "/"

	// The refused requests log errors in the console, which this test causes.
	u := newTab(t, browser, "the forging page", func(m chromedp.ConsoleMessage) bool { return true })
	u.do(chromedp.Navigate(evilURL), chromedp.WaitReady(chromedp.ID("f")))
	waitJS(u, "the forged fetch sent", `window.fetched !== undefined`)
	if got := eval[string](u, `window.fetched`); got != "sent" {
		t.Fatalf("the forged fetch: %s", got)
	}
	// The form: submitted, the browser lands on the API's answer.
	u.do(chromedp.Evaluate[chromedp.Void](`document.getElementById("f").submit()`))
	waitJS(u, "the form's answer", `location.href.startsWith(`+jsString(api)+`) && document.body !== null && document.body.innerText.includes("error")`)
	if got := eval[string](u, `document.body.innerText`); !strings.Contains(got, "cross-origin request refused") {
		t.Errorf("the forged form was answered %q", got)
	}
	if n := countTodos(t, api); n != 1 {
		t.Fatalf("%d todos after the forgeries, want the 1 made before", n)
	}
	if resp, err := http.Get(api + "/todos/1/attachment"); err != nil || resp.StatusCode != 404 {
		t.Fatalf("the forged upload: %v %v; want no attachment (404)", resp, err)
	}

	// The API's own origin: its page posts, and is answered 201.
	u.do(chromedp.Navigate(api + "/todos"))
	u.do(chromedp.Evaluate[chromedp.Void](`fetch("/todos", {method: "POST", headers: {"Content-Type": "application/json"}, body: '{"title":"mine"}'})
		.then((r) => { window.posted = r.status; }, (e) => { window.posted = -1; })`))
	waitJS(u, "the same-origin post answered", `window.posted !== undefined`)
	if got := eval[int](u, `window.posted`); got != 201 {
		t.Errorf("a same-origin post: %d, want 201", got)
	}
	if n := countTodos(t, api); n != 2 {
		t.Errorf("%d todos after the same-origin post, want 2", n)
	}
}

// waitJS waits until cond is true in the page, through a navigation (a poll whose page goes
// away is tried again in the next), and says where the page is when it does not come true.
func waitJS(u *user, what, cond string) {
	u.t.Helper()
	deadline := time.Now().Add(patience)
	for {
		ctx, cancel := context.WithDeadline(u.ctx, deadline)
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond,
			chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(time.Until(deadline))))
		cancel()
		if err == nil {
			return
		}
		if navigated(err) && time.Now().Before(deadline) {
			continue // the page navigated: poll the new one
		}
		u.t.Fatalf("waiting for %s (%s): %v; the page is at %s, showing %q", what, cond, err,
			eval[string](u, `location.href`), eval[string](u, `document.body ? document.body.innerText : ""`))
	}
}

// countTodos returns how many todos the API lists.
func countTodos(t *testing.T, api string) int {
	t.Helper()
	resp, err := http.Get(api + "/todos")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.Count(string(b), `"id"`)
}

// jsString quotes s for JavaScript.
func jsString(s string) string { return fmt.Sprintf("%q", s) }

// navigated reports whether err is a DevTools call's failing because its page navigated away.
func navigated(err error) bool {
	return strings.Contains(err.Error(), "Cannot find context") || strings.Contains(err.Error(), "navigated or closed")
}
