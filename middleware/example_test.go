package middleware_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/router"
)

// start serves h on a free loopback port and returns its base URL and a stop function.
func start(h core.Handler) (string, func()) {
	s := core.NewServer(h, core.Options{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err := s.Listen(); err != nil {
		panic(err)
	}
	go s.ListenAndServe()
	return "http://" + s.Addr().String(), func() { s.Shutdown(context.Background()) }
}

// do makes a request with the header fields given ("Name: value") and prints the status, the
// response fields named in show, and the body.
func do(method, url string, fields []string, show ...string) {
	req, _ := http.NewRequest(method, url, nil)
	for _, f := range fields {
		k, v, _ := strings.Cut(f, ": ")
		req.Header.Set(k, v)
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		r, _ = gzip.NewReader(r)
	}
	b, _ := io.ReadAll(r)
	fmt.Print(resp.Status)
	for _, h := range show {
		fmt.Printf(" | %s=%s", h, strings.Join(resp.Header.Values(h), ", "))
	}
	if len(b) > 0 {
		fmt.Printf(" | %q", b)
	}
	fmt.Println()
}

// quietLogger logs JSON lines to stdout without the time and duration, which change from run to
// run.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == "time" || a.Key == "duration" {
				return slog.Attr{}
			}
			return a
		},
	}))
}

// A service's usual stack: request ids, an access log, JSON answers for panics, on every route
// and on the router's own answers.
func Example() {
	r := router.New()
	r.Use(
		middleware.AssignRequestID,
		middleware.AccessLog(quietLogger()),
		middleware.Recover(middleware.JSONError),
	)
	r.GET("/hello", func(c *core.Ctx) {
		c.WriteString("hello, request " + middleware.RequestID(c))
	})
	r.GET("/crash", func(c *core.Ctx) { panic("bug") })
	url, stop := start(r.Handler())
	defer stop()

	do("GET", url+"/hello", []string{"X-Request-Id: req-1"}, "X-Request-Id")
	do("GET", url+"/crash", []string{"X-Request-Id: req-2"}, "X-Request-Id")
	// Output:
	// {"level":"INFO","msg":"request","method":"GET","path":"/hello","route":"/hello","status":200,"bytes":20,"request_id":"req-1"}
	// 200 OK | X-Request-Id=req-1 | "hello, request req-1"
	// {"level":"INFO","msg":"request","method":"GET","path":"/crash","route":"/crash","status":500,"bytes":34,"request_id":"req-2","error":"dwell: handler panicked: bug"}
	// 500 Internal Server Error | X-Request-Id=req-2 | "{\"error\":\"internal server error\"}\n"
}

// The server's own answers go through the access log too: here a 413 for a body over the
// route's limit, which the handler never answered.
func ExampleAccessLog() {
	r := router.New()
	r.Use(middleware.AccessLog(quietLogger()))
	limit := middleware.BodyLimit(10)
	r.POST("/upload", limit(func(c *core.Ctx) {
		buf := make([]byte, 64)
		for {
			if _, err := c.ReadBody(buf); err != nil {
				return // the body failed: the server answers
			}
		}
	}))
	url, stop := start(r.Handler())
	defer stop()

	resp, _ := http.Post(url+"/upload", "text/plain", strings.NewReader("more than ten bytes"))
	resp.Body.Close()
	fmt.Println(resp.Status)
	// Output:
	// {"level":"INFO","msg":"request","method":"POST","path":"/upload","route":"/upload","status":413,"bytes":53,"error":"dwell: request body too large"}
	// 413 Content Too Large
}

// A preflight from the allowed origin is answered with the allow fields; from another origin,
// without them.
func ExampleCORS() {
	r := router.New()
	r.Use(middleware.CORS(middleware.CORSOptions{
		Origins:       []string{"https://app.example"},
		ExposeHeaders: []string{"X-Request-Id"},
	}))
	r.DELETE("/todos/:id", func(c *core.Ctx) { c.SetStatus(204) })
	url, stop := start(r.Handler())
	defer stop()

	preflight := []string{"Access-Control-Request-Method: DELETE", "Access-Control-Request-Headers: authorization"}
	do("OPTIONS", url+"/todos/1", append(preflight, "Origin: https://app.example"),
		"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers")
	do("OPTIONS", url+"/todos/1", append(preflight, "Origin: https://evil.example"),
		"Access-Control-Allow-Origin", "Access-Control-Allow-Methods")
	do("DELETE", url+"/todos/1", []string{"Origin: https://app.example"}, "Access-Control-Allow-Origin", "Vary")
	// Output:
	// 204 No Content | Access-Control-Allow-Origin=https://app.example | Access-Control-Allow-Methods=GET, HEAD, POST, PUT, PATCH, DELETE | Access-Control-Allow-Headers=Content-Type, Authorization, X-Request-Id
	// 204 No Content | Access-Control-Allow-Origin= | Access-Control-Allow-Methods=
	// 204 No Content | Access-Control-Allow-Origin=https://app.example | Vary=Origin
}

// A large body of a text type is compressed for a client that accepts gzip; the same body is
// sent as it is to one that does not, and a small one to everyone.
func ExampleCompress() {
	r := router.New()
	r.Use(middleware.Compress(middleware.CompressOptions{}))
	r.GET("/list", func(c *core.Ctx) {
		c.SetHeader("Content-Type", "application/json")
		c.WriteString("[" + strings.Repeat(`{"title":"a todo","done":false},`, 99) + `{"title":"a todo","done":false}]`)
	})
	url, stop := start(r.Handler())
	defer stop()

	for _, ae := range []string{"gzip, br", "br"} {
		req, _ := http.NewRequest("GET", url+"/list", nil)
		req.Header.Set("Accept-Encoding", ae)
		tr := &http.Transport{DisableCompression: true}
		resp, _ := tr.RoundTrip(req)
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
		fmt.Printf("%s: %q, %d bytes, Vary: %s\n", ae, resp.Header.Get("Content-Encoding"), n, resp.Header.Get("Vary"))
	}
	// Output:
	// gzip, br: "gzip", 84 bytes, Vary: Accept-Encoding
	// br: "", 3201 bytes, Vary: Accept-Encoding
}

// Writes need the token; reads do not.
func ExampleBearerAuth() {
	auth := middleware.BearerAuth(middleware.BearerOptions{Token: "s3cret", Error: middleware.JSONError})
	r := router.New()
	r.GET("/todos", func(c *core.Ctx) { c.WriteString("[]") })
	r.POST("/todos", auth(func(c *core.Ctx) { c.SetStatus(201) }))
	url, stop := start(r.Handler())
	defer stop()

	do("GET", url+"/todos", nil)
	do("POST", url+"/todos", nil, "WWW-Authenticate")
	do("POST", url+"/todos", []string{"Authorization: Bearer s3cret"})
	// Output:
	// 200 OK | "[]"
	// 401 Unauthorized | WWW-Authenticate=Bearer | "{\"error\":\"a bearer token is required\"}\n"
	// 201 Created
}

// Behind an nginx on the same machine that appends to X-Forwarded-For
// (proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for), the client is the address
// nginx added; what the client itself put in that field, or in Forwarded, is not believed.
func ExampleRealIP() {
	r := router.New()
	r.Use(middleware.RealIP(middleware.RealIPOptions{
		Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	}))
	r.GET("/ip", func(c *core.Ctx) { c.WriteString(middleware.ClientIP(c).String()) })
	url, stop := start(r.Handler())
	defer stop()

	do("GET", url+"/ip", []string{"X-Forwarded-For: 6.6.6.6, 203.0.113.7"})
	do("GET", url+"/ip", []string{"Forwarded: for=6.6.6.6", "X-Forwarded-For: 203.0.113.7"})
	do("GET", url+"/ip", nil)
	// Output:
	// 200 OK | "203.0.113.7"
	// 200 OK | "203.0.113.7"
	// 200 OK | "127.0.0.1"
}

// Behind an nginx that overwrites X-Real-IP (proxy_set_header X-Real-IP $remote_addr), the
// field holds the one address nginx saw, and X-Forwarded-For is the client's word.
func ExampleRealIP_xRealIP() {
	r := router.New()
	r.Use(middleware.RealIP(middleware.RealIPOptions{
		Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Header:  "X-Real-IP",
	}))
	r.GET("/ip", func(c *core.Ctx) { c.WriteString(middleware.ClientIP(c).String()) })
	url, stop := start(r.Handler())
	defer stop()

	do("GET", url+"/ip", []string{"X-Real-IP: 203.0.113.9", "X-Forwarded-For: 6.6.6.6"})
	do("GET", url+"/ip", []string{"X-Real-IP: 6.6.6.6, 203.0.113.9"})
	// Output:
	// 200 OK | "203.0.113.9"
	// 200 OK | "127.0.0.1"
}
