package core_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
)

var errNoTenant = errors.New("dwell: no tenant given")

// A handler refuses a request in the server's own format, JSON here, as the server answers
// a body over the limit or a malformed request; with no format set, it answers its own way.
func ExampleCtx_Refuse() {
	h := func(c *core.Ctx) {
		tenant := c.Header("X-Tenant")
		if tenant == "" {
			if !c.Refuse(400, errNoTenant) {
				c.SetStatus(400)
				c.WriteString("no tenant given\n")
			}
			return
		}
		c.WriteString("hello, " + tenant)
	}
	for _, o := range []core.Options{{WriteRefusal: middleware.JSONRefusal}, {}} {
		o.Addr = "127.0.0.1:0"
		s := core.NewServer(h, o)
		if err := s.Listen(); err != nil {
			panic(err)
		}
		go s.ListenAndServe()
		resp, err := http.Get("http://" + s.Addr().String() + "/")
		if err != nil {
			panic(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%s %s: %s", resp.Status, resp.Header.Get("Content-Type"), b)
		s.Shutdown(context.Background())
	}
	// Output:
	// 400 Bad Request application/json: {"error":"no tenant given"}
	// 400 Bad Request text/plain; charset=utf-8: no tenant given
}
