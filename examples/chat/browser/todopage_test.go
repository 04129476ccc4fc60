package browser

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/dwellhttp/dwell/core/coretest"
)

// A listed todo, as GET /todos and the page show it.
type listed struct {
	ID    int64  `json:"id"`
	Title string `json:"title"`
	Done  bool   `json:"done"`
}

// apiTodos returns the todos of the API at base.
func apiTodos(t *testing.T, base string) []listed {
	t.Helper()
	resp, err := client.Get(base + "/todos")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []listed
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// apiWrite makes a write to the API at base, as another client of it, and returns the todo it
// answers with, if any.
func apiWrite(t *testing.T, method, url, body string, status int) listed {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("%s %s: %d %q, want %d", method, url, resp.StatusCode, b, status)
	}
	var td listed
	json.Unmarshal(b, &td)
	return td
}

// shownTodos is the list the page shows, in order, with each item's id.
const shownTodos = `[...document.querySelectorAll("#todos li")].map(li => ({
	id: Number(li.dataset.id), title: li.querySelector("label").textContent, done: li.querySelector("input").checked}))`

// pageShows returns the JavaScript condition that the page shows exactly want, in order.
func pageShows(want []listed) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as JSON.stringify writes "<"
	enc.Encode(want)
	return `JSON.stringify(` + shownTodos + `) === ` + jsString(strings.TrimSuffix(b.String(), "\n"))
}

// blockTodoSockets makes the todo page's WebSockets fail before they leave the browser, as a
// proxy that passes no upgrade would: a setup for openTodoPage. As user.block does the chat's,
// by taking their URLs offline (DevTools blocks no WebSocket otherwise).
func blockTodoSockets(u *user) {
	rules := []*network.Conditions{{URLPattern: "*://*:*/todos/ws?*", Offline: true, DownloadThroughput: -1, UploadThroughput: -1}}
	u.do(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulateByRule, emulateByRuleParams{Offline: true, MatchedNetworkConditions: rules})
		return err
	}))
}

// openTodoPage opens the todo page of base in a new tab, and waits until it is live, following
// the changes as transport says ("websocket" or "long-poll"). setup runs in the tab first.
func openTodoPage(t *testing.T, base, transport string, expected func(chromedp.ConsoleMessage) bool, setup ...func(*user)) *user {
	t.Helper()
	u := newTab(t, browser, "the todo page", expected)
	for _, f := range setup {
		f(u)
	}
	u.do(chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.ID("title")))
	waitJS(u, "the page live, by "+transport, `document.getElementById("status").textContent === "live" && document.getElementById("status").dataset.transport === "`+transport+`"`)
	return u
}

// TestTodoPage: examples/todo's own page, in Chromium. It shows the todos (as text: markup in a
// title stays text), follows the changes another client makes through the API as they are made,
// over its WebSocket, and its own additions, completions and deletions reach the API.
func TestTodoPage(t *testing.T) {
	if browser == nil {
		t.Skip(noBrowser)
	}
	p := startProgram(t, build(t, "../../todo"))
	api := "http://" + p.addr
	milk := apiWrite(t, "POST", api+"/todos", `{"title":"buy milk"}`, 201)
	bold := apiWrite(t, "POST", api+"/todos", `{"title":"<b>bold</b> & <i>co</i>","done":true}`, 201)

	u := openTodoPage(t, api, "websocket", nil)
	waitJS(u, "the list", pageShows([]listed{milk, bold}))
	if eval[bool](u, `document.querySelector("#todos b, #todos i") !== null`) {
		t.Errorf("the page rendered markup from a title")
	}

	// Another client's changes come live: an addition, a completion, a deletion.
	other := apiWrite(t, "POST", api+"/todos", `{"title":"from the API"}`, 201)
	waitJS(u, "the API's addition", pageShows([]listed{milk, bold, other}))
	milk.Done = true
	apiWrite(t, "PUT", api+"/todos/1", `{"title":"buy milk","done":true}`, 200)
	waitJS(u, "the API's completion", pageShows([]listed{milk, bold, other}))
	apiWrite(t, "DELETE", api+"/todos/2", "", 204)
	waitJS(u, "the API's deletion", pageShows([]listed{milk, other}))

	// The page's own: added with the form, completed with its checkbox, deleted with its
	// button, each in the API, and shown.
	u.do(chromedp.SendKeys(chromedp.ID("title"), "from the page"), chromedp.Click(chromedp.CSS("#add button")))
	var mine listed
	coretest.WaitFor(t, "the page's todo in GET /todos", func() bool {
		todos := apiTodos(t, api)
		mine = todos[len(todos)-1]
		return mine.Title == "from the page"
	})
	waitJS(u, "the page's addition shown", pageShows([]listed{milk, other, mine}))
	// The field is emptied once the POST is answered, which may come after the change itself
	// has come over the socket (served by another loop).
	waitJS(u, "the title field emptied after the addition", `document.getElementById("title").value === ""`)
	u.do(chromedp.Click(chromedp.CSS(`#todos li[data-id="` + jsonNumber(mine.ID) + `"] input`)))
	coretest.WaitFor(t, "the page's completion in GET /todos", func() bool {
		todos := apiTodos(t, api)
		return todos[len(todos)-1].Done
	})
	mine.Done = true
	waitJS(u, "the page's completion shown", pageShows([]listed{milk, other, mine}))
	u.do(chromedp.Click(chromedp.CSS(`#todos li[data-id="` + jsonNumber(other.ID) + `"] button`)))
	coretest.WaitFor(t, "the page's deletion in GET /todos", func() bool { return len(apiTodos(t, api)) == 2 })
	waitJS(u, "the page's deletion shown", pageShows([]listed{milk, mine}))
}

// TestTodoPageLongPoll: where no WebSocket gets through, the page follows the changes with long
// polls, and still shows another client's change as it is made.
func TestTodoPageLongPoll(t *testing.T) {
	if browser == nil {
		t.Skip(noBrowser)
	}
	p := startProgram(t, build(t, "../../todo"))
	api := "http://" + p.addr
	first := apiWrite(t, "POST", api+"/todos", `{"title":"first"}`, 201)
	// The socket that fails is logged by the browser itself.
	u := openTodoPage(t, api, "long-poll", func(m chromedp.ConsoleMessage) bool { return m.Source == "network" },
		blockTodoSockets)
	waitJS(u, "the list", pageShows([]listed{first}))
	second := apiWrite(t, "POST", api+"/todos", `{"title":"second"}`, 201)
	waitJS(u, "the API's addition", pageShows([]listed{first, second}))
}

// TestTodoPageRestart: the server crashes (SIGKILL) and comes back on the same -dir; the page
// says it is offline meanwhile, reconnects with its cursor, and shows the change made after the
// restart — numbered on from before it, as the log is in the database.
func TestTodoPageRestart(t *testing.T) {
	if browser == nil {
		t.Skip(noBrowser)
	}
	p := startProgram(t, build(t, "../../todo"), "-dir", t.TempDir())
	api := "http://" + p.addr
	before := apiWrite(t, "POST", api+"/todos", `{"title":"before"}`, 201)
	// The requests that fail while the server is down are logged by the browser itself.
	u := openTodoPage(t, api, "websocket", func(m chromedp.ConsoleMessage) bool { return m.Source == "network" })
	waitJS(u, "the list", pageShows([]listed{before}))
	p.kill()
	waitJS(u, "the page offline", `document.getElementById("status").dataset.state === "offline"`)
	p.start()
	after := apiWrite(t, "POST", api+"/todos", `{"title":"after"}`, 201)
	waitJS(u, "the change after the restart", pageShows([]listed{before, after})+
		` && document.getElementById("status").textContent === "live"`)
	if got := eval[int](u, `cursor`); got != 2 {
		t.Errorf("the page's cursor is %d after the second change, want 2", got)
	}
}

// TestTodoPageSignIn: with -token, the page's first write is refused (401); the page asks for
// the token, signs in with it (a session cookie), and makes the write then.
func TestTodoPageSignIn(t *testing.T) {
	if browser == nil {
		t.Skip(noBrowser)
	}
	p := startProgram(t, build(t, "../../todo"), "-token", "s3cret")
	api := "http://" + p.addr
	// The refused write and the wrong token are logged by the browser itself.
	u := openTodoPage(t, api, "websocket", func(m chromedp.ConsoleMessage) bool { return m.Source == "network" })
	u.do(chromedp.SendKeys(chromedp.ID("title"), "signed"), chromedp.Click(chromedp.CSS("#add button")))
	waitJS(u, "the sign-in form", `!document.getElementById("signin").hidden && document.activeElement === document.getElementById("token")`)
	if n := len(apiTodos(t, api)); n != 0 {
		t.Fatalf("%d todos after a refused write", n)
	}
	u.do(chromedp.SendKeys(chromedp.ID("token"), "wrong"), chromedp.Click(chromedp.CSS("#signin button")))
	waitJS(u, "the wrong token said so", `document.getElementById("notice").textContent === "That is not the token."`)
	u.do(chromedp.Clear(chromedp.ID("token")), chromedp.SendKeys(chromedp.ID("token"), "s3cret"), chromedp.Click(chromedp.CSS("#signin button")))
	coretest.WaitFor(t, "the write made once signed in", func() bool {
		todos := apiTodos(t, api)
		return len(todos) == 1 && todos[0].Title == "signed"
	})
	waitJS(u, "the todo shown, signed in", pageShows([]listed{{ID: 1, Title: "signed"}})+
		` && document.getElementById("signin").hidden && !document.getElementById("signout").hidden`)
}

// jsonNumber writes n in decimal.
func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
