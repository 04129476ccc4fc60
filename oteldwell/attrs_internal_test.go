package oteldwell

import (
	"fmt"
	"io"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/labels"
)

func TestSplitHost(t *testing.T) {
	for _, tc := range []struct {
		in   string
		host string
		port int
	}{
		{"example.com", "example.com", 0},
		{"example.com:8080", "example.com", 8080},
		{"127.0.0.1:80", "127.0.0.1", 80},
		{"[::1]:443", "::1", 443},
		{"[::1]", "::1", 0},
		{"::1", "::1", 0}, // not a valid Host, but no port to find in it
		{"example.com:", "example.com", 0},
		{"example.com:99999", "example.com", 0},
		{"example.com:http", "example.com", 0},
		{"[::1", "[::1", 0},
		{"", "", 0},
	} {
		if host, port := splitHost(tc.in); host != tc.host || port != tc.port {
			t.Errorf("splitHost(%q) = %q, %d; want %q, %d", tc.in, host, port, tc.host, tc.port)
		}
	}
}

func TestNormMethod(t *testing.T) {
	for in, want := range map[string]string{
		"GET": "GET", "HEAD": "HEAD", "POST": "POST", "PUT": "PUT", "DELETE": "DELETE",
		"PATCH": "PATCH", "OPTIONS": "OPTIONS", "CONNECT": "CONNECT", "TRACE": "TRACE",
		"QUERY": "QUERY", "get": "_OTHER", "PROPFIND": "_OTHER", "": "_OTHER",
	} {
		if got := labels.Method(in); got != want {
			t.Errorf("labels.Method(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestErrorType: error.type names what the core reports, and the status of a 5xx; a response
// that succeeded, 4xx included, has none.
func TestErrorType(t *testing.T) {
	for _, tc := range []struct {
		d    core.Done
		want string
	}{
		{core.Done{Status: 200}, ""},
		{core.Done{Status: 404}, ""},
		{core.Done{Status: 500}, "500"},
		{core.Done{Status: 503}, "503"},
		{core.Done{Status: 200, Err: core.ErrClosed}, "client_closed"},
		{core.Done{Status: 503, Err: core.ErrShutdown}, "shutdown"},
		{core.Done{Status: 503, Err: core.ErrDeadline}, "deadline_exceeded"},
		{core.Done{Status: 408, Err: core.ErrTimeout}, "timeout"},
		{core.Done{Status: 413, Err: core.ErrBodyTooLarge}, "body_too_large"},
		{core.Done{Status: 400, Err: io.ErrUnexpectedEOF}, "body_truncated"},
		{core.Done{Status: 200, Err: core.ErrAbortHandler}, "aborted"},
		{core.Done{Status: 500, Err: &core.PanicError{Value: "boom"}}, "panic"},
		{core.Done{Status: 400, Err: fmt.Errorf("malformed chunk")}, "_OTHER"},
	} {
		if got := errorType(tc.d); got != tc.want {
			t.Errorf("errorType(%d, %v) = %q, want %q", tc.d.Status, tc.d.Err, got, tc.want)
		}
	}
}
