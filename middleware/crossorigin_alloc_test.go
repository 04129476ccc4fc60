//go:build !race && linux && !dwell_portable

package middleware_test

import (
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
)

// TestCrossOriginAllocs: CrossOrigin reads the fields it decides on as borrowed bytes, so that a
// request it lets through costs no allocation — a browser's same-origin request, a safe one, a
// program's, a trusted origin's, a bypassed path — but for the Host's copy when an Origin is
// compared with it, which only browsers older than Sec-Fetch-Site make it do.
func TestCrossOriginAllocs(t *testing.T) {
	mw := middleware.CrossOrigin(middleware.CrossOriginOptions{
		TrustedOrigins: []string{"https://app.example"},
		Bypass:         []string{"/saml/acs", "/hooks/*"},
	})
	_, addr := coretest.Serve(t, mw(hello), core.Options{})
	cases := []struct {
		name   string
		req    string
		allocs float64
	}{
		{"same-origin", "POST /hello HTTP/1.1\r\nHost: h\r\nSec-Fetch-Site: same-origin\r\nOrigin: http://h\r\nContent-Length: 0\r\n\r\n", 0},
		{"none", "POST /hello HTTP/1.1\r\nHost: h\r\nSec-Fetch-Site: none\r\nContent-Length: 0\r\n\r\n", 0},
		{"GET cross-site", "GET /hello HTTP/1.1\r\nHost: h\r\nSec-Fetch-Site: cross-site\r\nOrigin: https://evil.example\r\n\r\n", 0},
		{"no fields", "POST /hello HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", 0},
		{"trusted", "POST /hello HTTP/1.1\r\nHost: h\r\nSec-Fetch-Site: cross-site\r\nOrigin: https://app.example\r\nContent-Length: 0\r\n\r\n", 0},
		{"bypassed", "POST /hooks/a HTTP/1.1\r\nHost: h\r\nSec-Fetch-Site: cross-site\r\nContent-Length: 0\r\n\r\n", 0},
		// The Host, copied by Ctx.Host (a one-byte string would come from the runtime's table).
		{"Origin is the Host", "POST /hello HTTP/1.1\r\nHost: app.example\r\nOrigin: http://app.example\r\nContent-Length: 0\r\n\r\n", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := coretest.NewRoundTripper(t, addr, tc.req)
			for range 100 {
				rt.Do(t)
			}
			got := testing.AllocsPerRun(1000, func() { rt.Do(t) })
			t.Logf("%s: %.2f allocations per request", tc.name, got)
			if got != tc.allocs {
				t.Fatalf("%.2f allocations per request, want %.0f", got, tc.allocs)
			}
		})
	}
}
