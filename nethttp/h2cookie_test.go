package nethttp

import (
	"io"
	"net/http"
	"testing"

	"github.com/dwellhttp/dwell/core"
)

// TestH2CookieJoined: net/http's client splits a Cookie into crumbs over HTTP/2 (RFC 9113
// §8.2.3); a net/http handler on dwell sees them as one Cookie field joined with "; ", as on
// net/http's own server, and as a proxy passing the request to HTTP/1.1 must send it.
func TestH2CookieJoined(t *testing.T) {
	_, addr := serveStd(t, func(w http.ResponseWriter, r *http.Request) {
		for _, v := range r.Header.Values("Cookie") {
			io.WriteString(w, "["+v+"]")
		}
		io.WriteString(w, " "+r.Proto)
	}, core.Options{})
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	req.Header.Set("Cookie", "a=1; b=2; c=3")
	resp, err := h2cClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "[a=1; b=2; c=3] HTTP/2.0" {
		t.Fatalf("the handler saw %q, want one Cookie field \"a=1; b=2; c=3\" over HTTP/2", got)
	}
}
