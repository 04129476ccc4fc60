package body_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestReadForm: fields decoded, repeated ones kept in order, the query left out; the statuses of
// a wrong type, a body over the limit and a malformed one.
func TestReadForm(t *testing.T) {
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		v, err := body.ReadForm(c, 32)
		if err != nil {
			answerBodyError(c, err)
			return
		}
		fmt.Fprintf(c, "%q %q %d", v["name"], v.Get("note"), len(v))
	}, core.Options{})
	const form = "Content-Type: application/x-www-form-urlencoded\r\n"
	cases := []struct {
		name   string
		req    string
		status int
		want   string
	}{
		{"fields", post("/?q=1", []byte("name=a+b&name=%C3%A9&note="), false, form), 200, `["a b" "é"] "" 2`},
		{"chunked", post("/", []byte("name=x"), true, form), 200, `["x"] "" 1`},
		{"charset", post("/", []byte("name=x"), false, "Content-Type: application/x-www-form-urlencoded; charset=utf-8\r\n"), 200, `["x"]`},
		{"empty", post("/", nil, false, form), 200, `[] "" 0`},
		{"bad escape", post("/", []byte("name=%zz"), false, form), 400, `malformed form: invalid URL escape "%zz"`},
		{"semicolon", post("/", []byte("a=1;b=2"), false, form), 400, "malformed form: invalid semicolon separator"},
		{"over the limit", post("/", []byte("name="+strings.Repeat("x", 28)), false, form), 413, "request body over 32 bytes"},
		{"json", post("/", []byte(`{}`), false, "Content-Type: application/json\r\n"), 415, "want application/x-www-form-urlencoded"},
		{"no type", post("/", []byte("a=1"), false, ""), 415, "is not a form"},
		{"gzipped", post("/", []byte("\x1f\x8b"), false, form+"Content-Encoding: gzip\r\n"), 415, `Content-Encoding "gzip" is not accepted`},
		{"identity", post("/", []byte("name=x"), false, form+"Content-Encoding: identity\r\n"), 200, `["x"]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			c.Send(tc.req)
			resp, got := c.Response("POST")
			if resp.StatusCode != tc.status || !strings.Contains(got, tc.want) {
				t.Fatalf("got %d %q, want %d containing %q", resp.StatusCode, got, tc.status, tc.want)
			}
			if ae := resp.Header.Get("Accept-Encoding"); (ae == "identity") != strings.Contains(tc.want, "Content-Encoding") {
				t.Fatalf("Accept-Encoding %q", ae)
			}
		})
	}
}
