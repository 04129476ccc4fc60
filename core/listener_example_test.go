package core_test

import (
	"context"

	"github.com/dwellhttp/dwell/core"
)

// One server, two addresses with a handler each: the application on one, and on the other an
// answer that sends clients to it (router.RedirectToHTTPSAddr(srv.Addr) is the usual one, with
// the first listener speaking TLS). Shutdown stops both.
func ExampleServer_AddListener() {
	srv := core.NewServer(func(c *core.Ctx) {
		c.WriteString("the application")
	}, core.Options{Addr: "127.0.0.1:0"})
	srv.AddListener(core.Listener{Addr: "127.0.0.1:0", Handler: func(c *core.Ctx) {
		c.SetHeader("Location", "http://"+srv.Addr().String()+"/")
		c.SetStatus(308)
	}})
	if err := srv.Listen(); err != nil {
		panic(err)
	}
	go srv.ListenAndServe()
	defer srv.Shutdown(context.Background())

	addrs := srv.Addrs()
	get("http://" + addrs[1].String() + "/") // the client follows the redirect
	// Output:
	// 200 OK "the application"
}
