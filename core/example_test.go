package core_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dwellhttp/dwell/core"
)

// serve runs h on a free loopback port and returns its base URL and a stop function.
func serve(h core.Handler) (string, func()) {
	s := core.NewServer(h, core.Options{Addr: "127.0.0.1:0"})
	if err := s.Listen(); err != nil {
		panic(err)
	}
	go s.ListenAndServe()
	return "http://" + s.Addr().String(), func() { s.Shutdown(context.Background()) }
}

// get prints the status and body of a GET with the given header fields (name, value, ...).
func get(url string, fields ...string) {
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(fields); i += 2 {
		req.Header.Set(fields[i], fields[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Printf("%s %q\n", resp.Status, b)
}

func Example() {
	srv := core.NewServer(func(c *core.Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString("Hello World")
	}, core.Options{Addr: "127.0.0.1:0"})
	if err := srv.Listen(); err != nil {
		panic(err)
	}
	go srv.ListenAndServe() // returns core.ErrServerClosed after Shutdown
	defer srv.Shutdown(context.Background())

	get("http://" + srv.Addr().String() + "/")
	// Output:
	// 200 OK "Hello World"
}

// A handler that waits for work done elsewhere parks only itself: it takes a Waker, hands it to
// the goroutine doing the work, and suspends until woken.
func ExampleCtx_Suspend() {
	url, stop := serve(func(c *core.Ctx) {
		results := make(chan int, 1)
		w := c.Waker()
		go func() {
			results <- 6 * 7 // a slow computation, a call to another service, ...
			w.Wake(nil)
		}()
		if err := c.Suspend(10 * time.Second); err != nil {
			c.SetStatus(http.StatusGatewayTimeout)
			return
		}
		c.WriteString("the answer is " + strconv.Itoa(<-results))
	})
	defer stop()

	get(url + "/")
	// Output:
	// 200 OK "the answer is 42"
}

// Detach ends the handler but not its response: the continuation finishes it later. The
// request's values are gone by then, so the handler copies what the continuation needs.
func ExampleCtx_Detach() {
	url, stop := serve(func(c *core.Ctx) {
		name := c.Query("name") // an owned copy: still valid in the continuation
		c.Detach(20*time.Millisecond, func(c *core.Ctx, err error) {
			fmt.Fprintf(c, "hello %s, after %v", name, err)
		})
	})
	defer stop()

	get(url + "/?name=ada")
	// Output:
	// 200 OK "hello ada, after dwell: timeout"
}

// The Bytes view gives the request's own bytes without a copy, borrowed until the handler
// returns: fine to compare or parse, to be copied to be kept.
func ExampleCtx_Bytes() {
	var kept []string
	url, stop := serve(func(c *core.Ctx) {
		mode, _ := c.Bytes().Header("X-Mode")
		if bytes.Equal(mode, []byte("fast")) {
			c.WriteString("fast path")
			return
		}
		kept = append(kept, string(mode)) // string(...) copies
		c.WriteString("kept " + kept[len(kept)-1])
	})
	defer stop()

	get(url+"/", "X-Mode", "fast")
	get(url+"/", "X-Mode", "slow")
	// Output:
	// 200 OK "fast path"
	// 200 OK "kept slow"
}

// A package built on core reaches the request's plumbing through its Seam, as dwell's own do:
// here a router of its own records its match, which the handler (and logs, traces and metrics)
// then read through the Ctx.
func ExampleCtx_Seam() {
	route := core.NewRoute("/users/:id")
	url, stop := serve(func(c *core.Ctx) {
		// What a router does once it has matched the path.
		if id, ok := strings.CutPrefix(c.Path(), "/users/"); ok {
			c.Seam().SetParams([]core.Param{{Key: "id", Value: id}})
			c.Seam().SetRoute(route)
		}
		fmt.Fprintf(c, "route %s, id %s", c.Route(), c.Param("id"))
	})
	defer stop()

	get(url + "/users/42")
	// Output:
	// 200 OK "route /users/:id, id 42"
}

// OnDone sees how a response really ended, whoever answered: here the server itself, with a 413
// for a body over the limit.
func ExampleCtx_OnDone() {
	done := make(chan core.Done, 1)
	s := core.NewServer(func(c *core.Ctx) {
		c.OnDone(func(d core.Done) { done <- d })
		buf := make([]byte, 512)
		for {
			_, err := c.ReadBody(buf)
			if err == io.EOF {
				break
			}
			if err != nil {
				return // ErrBodyTooLarge: the server answers 413
			}
		}
		c.WriteString("stored")
	}, core.Options{Addr: "127.0.0.1:0", MaxBodyBytes: 4})
	if err := s.Listen(); err != nil {
		panic(err)
	}
	go s.ListenAndServe()
	defer s.Shutdown(context.Background())

	resp, err := http.Post("http://"+s.Addr().String()+"/", "text/plain", bytes.NewBufferString("too long"))
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	d := <-done
	fmt.Println(resp.StatusCode, d.Status)
	// Output:
	// 413 413
}
