package statuspage_test

import (
	"log"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/router"
	"github.com/dwellhttp/dwell/statuspage"
)

// The page mounted at /debug/dwell. The route calls the handler through a variable, set once
// the server exists and before it starts: the router is frozen when the server takes it.
func ExampleHandler() {
	r := router.New()
	r.GET("/", func(c *core.Ctx) { c.WriteString("hello\n") })
	var status core.Handler
	r.GET("/debug/dwell", func(c *core.Ctx) { status(c) })
	s := core.NewServer(r.Handler(), core.Options{Addr: "127.0.0.1:8080"})
	status = statuspage.Handler(s, statuspage.Options{})
	if err := s.ListenAndServe(); err != nil {
		log.Fatal(err)
	}
}
