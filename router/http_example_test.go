package router_test

import (
	"context"
	"expvar"
	"fmt"
	"io"
	"net/http"
	"net/http/pprof"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/router"
)

// serveExample serves h on a free loopback port and returns its base URL and a stop function.
func serveExample(h core.Handler) (string, func()) {
	s := core.NewServer(h, core.Options{Addr: "127.0.0.1:0"})
	if err := s.Listen(); err != nil {
		panic(err)
	}
	go s.ListenAndServe()
	return "http://" + s.Addr().String(), func() { s.Shutdown(context.Background()) }
}

// show prints a response's status and the first line of its body.
func show(resp *http.Response, err error) {
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	line, _, _ := strings.Cut(string(b), "\n")
	fmt.Printf("%s %s\n", resp.Status, line)
}

// A net/http handler beside dwell handlers: it runs on a goroutine of its own, reads the
// route's parameters as path values and streams its body both ways.
func ExampleRouter_HandleHTTP() {
	r := router.New()
	r.GET("/native/:name", func(c *core.Ctx) {
		c.WriteString("dwell greets " + c.Param("name"))
	})
	r.HandleHTTP("GET", "/std/:name", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "net/http greets %s", r.PathValue("name"))
	}))
	r.HandleHTTP("POST", "/echo", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	}))
	url, stop := serveExample(r.Handler())
	defer stop()

	show(http.Get(url + "/native/ann"))
	show(http.Get(url + "/std/bob"))
	show(http.Post(url+"/echo", "text/plain", strings.NewReader("echoed")))
	// Output:
	// 200 OK dwell greets ann
	// 200 OK net/http greets bob
	// 200 OK echoed
}

// Mounting the standard library's debugging handlers: the profiles of net/http/pprof and the
// variables of expvar, each seeing the request's full path.
func ExampleRouter_Mount() {
	debug := http.NewServeMux()
	debug.HandleFunc("/debug/pprof/", pprof.Index)
	debug.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	debug.HandleFunc("/debug/pprof/profile", pprof.Profile)
	debug.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	debug.HandleFunc("/debug/pprof/trace", pprof.Trace)

	r := router.New()
	r.Mount("/debug/pprof", debug)
	r.HandleHTTP("GET", "/debug/vars", expvar.Handler())
	url, stop := serveExample(r.Handler())
	defer stop()

	for _, path := range []string{"/debug/pprof/goroutine?debug=1", "/debug/vars"} {
		resp, err := http.Get(url + path)
		if err != nil {
			fmt.Println(err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(path, resp.Status, strings.HasPrefix(string(b), "goroutine profile:") ||
			strings.Contains(string(b), `"memstats": {`))
	}
	// Output:
	// /debug/pprof/goroutine?debug=1 200 OK true
	// /debug/vars 200 OK true
}
