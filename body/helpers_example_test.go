package body_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strings"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
)

// Read a JSON body into a struct, refusing unknown fields, and answer errors with their status
// and a message that says where the body went wrong.
func ExampleReadJSON() {
	base, stop := serveExample(func(c *core.Ctx) {
		var in struct {
			Title string `json:"title"`
			Done  bool   `json:"done"`
		}
		err := body.ReadJSON(c, &in, body.JSONOptions{Limit: 1 << 10, DisallowUnknownFields: true})
		var e *body.Error
		switch {
		case errors.As(err, &e):
			body.WriteJSON(c, e.Status, map[string]string{"error": e.Error()})
		case err != nil:
			// The body broke on the wire (the client stopped, say): the server answers.
		default:
			body.WriteJSON(c, 201, in)
		}
	})
	defer stop()
	for _, b := range []string{`{"title":"write docs"}`, `{"title":"x","due":"monday"}`, `{"title":7}`, `{"title":`} {
		showLine(http.Post(base+"/", "application/json", strings.NewReader(b)))
	}
	showLine(http.Post(base+"/", "text/plain", strings.NewReader(`{}`)))
	// Output:
	// 201 {"title":"write docs","done":false}
	// 400 {"error":"JSON field \"due\" is unknown (byte offset 18)"}
	// 400 {"error":"JSON field \"title\": got number, want string (byte offset 10)"}
	// 400 {"error":"JSON value cut short at byte offset 9"}
	// 415 {"error":"Content-Type \"text/plain\" is not JSON; want application/json"}
}

// Store an upload without blocking the loop: each piece is read on the loop and written off it,
// here into a hash (a file would do the same). Only a nil error means the body arrived whole.
func ExampleCopy() {
	base, stop := serveExample(func(c *core.Ctx) {
		var h hash.Hash = sha256.New()
		n, err := body.Copy(c, h, body.Reader(c))
		if err != nil {
			// io.ErrUnexpectedEOF: the client stopped early. Whatever was written is
			// incomplete and must be thrown away.
			return
		}
		fmt.Fprintf(c, "%d bytes, sha256 %x", n, h.Sum(nil)[:4])
	})
	defer stop()
	show(http.Post(base+"/", "application/octet-stream", strings.NewReader(strings.Repeat("x", 1<<20))))
	// Output: 200 1048576 bytes, sha256 8f990ba0
}

// showLine prints the status and a body that ends its line itself, as WriteJSON's does.
func showLine(resp *http.Response, err error) {
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Printf("%d %s", resp.StatusCode, b)
}
