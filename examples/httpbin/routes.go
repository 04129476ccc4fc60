package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/router"
)

// newHandler routes every method on /anything to the echo, and the rest through the router,
// which answers 404, 405 with Allow, OPTIONS and the trailing-slash redirects.
func newHandler() core.Handler {
	r := router.New()
	r.GET("/status/:code", status)
	r.GET("/bytes/:n", sendBytes)
	r.GET("/stream-bytes/:n", streamBytes)
	r.GET("/delay/:ms", delay)
	r.GET("/drip", drip)
	routes := r.Handler()
	return func(c *core.Ctx) {
		// Any method, including ones no router table lists (PROPFIND, FOO), reaches /anything.
		if p := c.Path(); p == "/anything" || strings.HasPrefix(p, "/anything/") {
			anything(c)
			return
		}
		routes(c)
	}
}

// badRequest answers 400 with a one-line reason.
func badRequest(c *core.Ctx, format string, args ...any) {
	c.SetStatus(400)
	c.SetHeader("Content-Type", "text/plain; charset=utf-8")
	c.WriteString("400 bad request: " + fmt.Sprintf(format, args...) + "\n")
}

// intParam parses s as a decimal integer in [lo, hi]; ok is false otherwise.
func intParam(s string, lo, hi int64) (int64, bool) {
	if s == "" || s[0] == '+' {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= lo && n <= hi
}
