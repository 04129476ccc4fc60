package wait_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/wait"
)

// A long poll: GET /messages?after=N answers at once with what came after N, or waits up to
// 30 s for the next message. A client keeps the returned last as its next cursor.
func ExampleTopic() {
	topic := wait.NewTopic[string](1000)
	handler := func(c *core.Ctx) {
		after, _ := strconv.ParseUint(c.Query("after"), 10, 64)
		msgs, last, err := topic.Next(c, after, 30*time.Second)
		if err != nil && err != wait.ErrMissed && err != wait.ErrTimeout {
			return // the client left or the server is shutting down
		}
		c.SetHeader("Content-Type", "application/json")
		json.NewEncoder(c).Encode(map[string]any{"messages": msgs, "last": last})
	}

	s := core.NewServer(handler, core.Options{Addr: "127.0.0.1:0"})
	s.Listen()
	go s.ListenAndServe()
	defer s.Shutdown(context.Background())

	topic.Publish("hello")
	get := func(target string) string {
		resp, err := http.Get("http://" + s.Addr().String() + target)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	fmt.Print(get("/messages?after=0")) // at once: something came after 0
	go func() {
		time.Sleep(50 * time.Millisecond)
		topic.Publish("world") // from any goroutine
	}()
	fmt.Print(get("/messages?after=1")) // parks until the publish
	// Output:
	// {"last":1,"messages":["hello"]}
	// {"last":2,"messages":["world"]}
}

// The continuation form of the same long poll: the handler returns at once and the response is
// written by a plain function later, so a waiting client costs a few hundred bytes.
func ExampleTopic_OnNext() {
	topic := wait.NewTopic[string](1000)
	reply := func(c *core.Ctx, msgs []string, last uint64, err error) {
		if err != nil && err != wait.ErrMissed && err != wait.ErrTimeout {
			return
		}
		c.SetHeader("Content-Type", "application/json")
		json.NewEncoder(c).Encode(map[string]any{"messages": msgs, "last": last})
	}
	_ = core.Handler(func(c *core.Ctx) {
		after, _ := strconv.ParseUint(c.Query("after"), 10, 64)
		topic.OnNext(c, after, 30*time.Second, reply)
	})
}

// A blocking call — here a database query — runs on the worker pool; the handler parks until it
// returns, and its loop goes on serving everyone else.
func ExampleDo() {
	var db *sql.DB // opened elsewhere
	_ = core.Handler(func(c *core.Ctx) {
		id := c.Query("id") // borrowed, but valid until the handler returns: Do returns before
		var name string
		var qerr error
		if err := wait.Do(c, func() {
			qerr = db.QueryRow("SELECT name FROM users WHERE id = ?", id).Scan(&name)
		}); err != nil {
			return // the client left meanwhile
		}
		if qerr != nil {
			c.SetStatus(404)
			return
		}
		c.WriteString(name)
	})
}

// A query with a result: Call returns it, and a deadline bounds the wait even if the query
// outlasts it.
func ExampleCall() {
	var db *sql.DB // opened elsewhere
	_ = core.Handler(func(c *core.Ctx) {
		c.SetTimeout(2 * time.Second)
		id := c.Query("id") // a string of the handler's own: fn may use it after the handler
		name, err := wait.Call(c, func(ctx context.Context) (string, error) {
			var name string
			err := db.QueryRowContext(ctx, "SELECT name FROM users WHERE id = ?", id).Scan(&name)
			return name, err
		})
		switch {
		case errors.Is(err, sql.ErrNoRows):
			c.SetStatus(404)
		case err != nil:
			return // the client left, or the deadline passed: the server answers 503
		default:
			c.WriteString(name)
		}
	})
}

// An Event wakes every handler waiting on it, on whatever loop each runs.
func ExampleEvent() {
	var reloaded wait.Event
	_ = core.Handler(func(c *core.Ctx) {
		switch err := reloaded.Wait(c, time.Minute); err {
		case nil:
			c.WriteString("reloaded")
		case wait.ErrTimeout:
			c.SetStatus(204)
		}
	})
	reloaded.Fire() // from anywhere: a signal handler, a watcher goroutine
}

func ExampleSleep() {
	_ = core.Handler(func(c *core.Ctx) {
		for i := range 3 {
			fmt.Fprintf(c, "tick %d\n", i)
			c.Flush()
			if wait.Sleep(c, time.Second) != nil {
				return // the client left
			}
		}
	})
}

func ExampleAfter() {
	_ = core.Handler(func(c *core.Ctx) {
		wait.After(c, time.Second, func(c *core.Ctx, err error) {
			if err == nil {
				c.WriteString("a second later")
			}
		})
	})
}

// A Sequence follows a log kept somewhere else — here a slice that another goroutine appends
// to, as a message broker's subscription would. Whoever appends advances the sequence to the
// new length; a handler that has read up to its cursor waits until the sequence passes it, then
// reads what came.
func ExampleSequence() {
	var (
		mu  sync.Mutex
		log []string
		seq wait.Sequence // len(log), published after each append
	)
	appendEntries := func(entries ...string) { // from any goroutine
		mu.Lock()
		log = append(log, entries...)
		n := uint64(len(log))
		mu.Unlock()
		seq.Advance(n)
	}
	handler := func(c *core.Ctx) {
		after, _ := strconv.ParseUint(c.Query("after"), 10, 64)
		if seq.Wait(c, after, 30*time.Second) != nil {
			return // a timeout, a client gone, a shutdown
		}
		mu.Lock()
		entries := append([]string(nil), log[min(after, uint64(len(log))):]...)
		mu.Unlock()
		fmt.Fprintf(c, "%s\n", strings.Join(entries, " "))
	}

	s := core.NewServer(handler, core.Options{Addr: "127.0.0.1:0"})
	s.Listen()
	go s.ListenAndServe()
	defer s.Shutdown(context.Background())

	appendEntries("a")
	go func() {
		time.Sleep(50 * time.Millisecond)
		appendEntries("b", "c")
	}()
	resp, err := http.Get("http://" + s.Addr().String() + "/?after=1")
	if err != nil {
		return
	}
	defer resp.Body.Close()
	io.Copy(os.Stdout, resp.Body)
	// Output:
	// b c
}
