package h2

import (
	"errors"
	"strings"
	"testing"
)

// TestRequestCheck: RFC 9113 §8's rules for a request's fields, each broken once, and the
// blocks that keep them.
func TestRequestCheck(t *testing.T) {
	get := ":method: GET\n:scheme: https\n:path: /\n:authority: example.com\n"
	for _, tc := range []struct {
		name, block string
		trailers    bool
		protocol    bool // SETTINGS_ENABLE_CONNECT_PROTOCOL
		ok          bool
	}{
		{"a GET", get + "accept: */*\nte: trailers\n", false, false, true},
		{"no :authority (optional)", ":method: GET\n:scheme: http\n:path: /a\n", false, false, true},
		{"CONNECT", ":method: CONNECT\n:authority: example.com:443\n", false, false, true},
		{"extended CONNECT", ":method: CONNECT\n:protocol: websocket\n:scheme: https\n:path: /chat\n:authority: example.com\n", false, true, true},
		{"trailers", "grpc-status: 0\n", true, false, true},
		{"no :method", ":scheme: https\n:path: /\n", false, false, false},
		{"no :path", ":method: GET\n:scheme: https\n", false, false, false},
		{"empty :path", ":method: GET\n:scheme: https\n:path: \n", false, false, false},
		{"two :path", get + ":path: /b\n", false, false, false},
		{"pseudo after regular", ":method: GET\naccept: */*\n:scheme: https\n:path: /\n", false, false, false},
		{"unknown pseudo", get + ":status: 200\n", false, false, false},
		{"upper-case name", get + "Accept: */*\n", false, false, false},
		{"connection", get + "connection: keep-alive\n", false, false, false},
		{"transfer-encoding", get + "transfer-encoding: chunked\n", false, false, false},
		{"te: gzip", get + "te: gzip\n", false, false, false},
		{"value with CR", get + "x: a\rb\n", false, false, false},
		{"value with leading space", get + "x:  a\n", false, false, false},
		{"CONNECT with :path", ":method: CONNECT\n:authority: a:1\n:path: /\n", false, false, false},
		{":protocol not enabled", ":method: CONNECT\n:protocol: websocket\n:scheme: https\n:path: /\n:authority: a\n", false, false, false},
		{":protocol on a GET", get + ":protocol: websocket\n", false, true, false},
		{"pseudo in trailers", ":path: /\n", true, false, false},
		// §8.3.1: :path is origin-form, or * for OPTIONS; never absolute-form, whose authority
		// would stand in for :authority (and the Host it was checked against).
		{"OPTIONS *", ":method: OPTIONS\n:scheme: https\n:path: *\n:authority: example.com\n", false, false, true},
		{"OPTIONS with a path", ":method: OPTIONS\n:scheme: https\n:path: /a\n", false, false, true},
		{"* before :method", ":path: *\n:scheme: https\n:method: OPTIONS\n", false, false, true},
		{"absolute-form :path", ":method: GET\n:scheme: http\n:path: http://evil.example/x\n:authority: localhost\n", false, false, false},
		{"authority-form :path", ":method: GET\n:scheme: http\n:path: evil.example:80\n", false, false, false},
		{"relative :path", ":method: GET\n:scheme: http\n:path: a/b\n", false, false, false},
		{"* on a GET", ":method: GET\n:scheme: https\n:path: *\n", false, false, false},
		{"*x on OPTIONS", ":method: OPTIONS\n:scheme: https\n:path: *x\n", false, false, false},
		{"extended CONNECT to *", ":method: CONNECT\n:protocol: websocket\n:scheme: https\n:path: *\n:authority: a\n", false, true, false},
		{"extended CONNECT, absolute-form", ":method: CONNECT\n:protocol: websocket\n:scheme: https\n:path: https://b/chat\n:authority: a\n", false, true, false},
	} {
		c := RequestCheck{StreamID: 5, Trailers: tc.trailers, ConnectProtocol: tc.protocol}
		var err error
		for _, line := range strings.Split(strings.TrimSuffix(tc.block, "\n"), "\n") {
			i := strings.Index(line[1:], ": ") + 1
			if err = c.Field([]byte(line[:i]), []byte(line[i+2:])); err != nil {
				break
			}
		}
		if err == nil {
			err = c.End()
		}
		var se *StreamError
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !tc.ok && (!errors.As(err, &se) || se.Code != ProtocolError || se.StreamID != 5):
			t.Errorf("%s: %v, want a stream PROTOCOL_ERROR", tc.name, err)
		}
	}
}
