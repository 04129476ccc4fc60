package nethttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/nethttp"
)

// A net/http handler as a dwell handler, here the server's only one: it runs on a goroutine of
// its own and streams the request body back as it comes. (With a router, HandleHTTP and Mount
// register net/http handlers on routes.)
func ExampleHandler() {
	echo := nethttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.Copy(w, r.Body)
	}))
	s := core.NewServer(echo, core.Options{Addr: "127.0.0.1:0"})
	if err := s.Listen(); err != nil {
		panic(err)
	}
	go s.ListenAndServe()
	defer s.Shutdown(context.Background())

	resp, err := http.Post("http://"+s.Addr().String()+"/", "text/plain", strings.NewReader("echoed"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, string(b))
	// Output:
	// 200 OK echoed
}
