package coretest

import (
	"fmt"
	"io"
	"testing"

	"github.com/dwellhttp/dwell/core"
)

// TestBodyReadIsNotParked: a handler waiting for its request body waits for the test's own
// client, and is not parked for WaitParked, though Stats counts it Parked.
func TestBodyReadIsNotParked(t *testing.T) {
	h := func(c *core.Ctx) {
		var got []byte
		buf := make([]byte, 64)
		for {
			n, err := c.ReadBody(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				fmt.Fprintf(c, "%s (%v)", got, err)
				return
			}
		}
	}
	cl := NewClient(t, h, core.Options{})
	pr, pw := io.Pipe()
	x := cl.Start(NewRequest("POST", "/", pr))
	if _, err := io.WriteString(pw, "first"); err != nil { // taken by the request's writer
		t.Fatal(err)
	}
	WaitFor(t, "the handler to wait for the rest of its body", func() bool {
		return cl.Server().Stats().Total.Conns.Parked == 1
	})
	if parked, _, over := x.served.Waiting(); parked || over {
		t.Fatalf("reading its body, the handler is parked %v, over %v", parked, over)
	}
	io.WriteString(pw, ", second")
	pw.Close()
	b, _ := io.ReadAll(x.Response().Body)
	if string(b) != "first, second (EOF)" {
		t.Fatalf("body %q", b)
	}
}
