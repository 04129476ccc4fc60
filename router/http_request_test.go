package router

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/nethttp"
)

// requestView is what a net/http handler saw of its request.
type requestView struct {
	Method, RequestURI, Path, RawPath, RawQuery, Scheme, URLHost string
	Proto                                                        string
	ProtoMajor, ProtoMinor                                       int
	Header                                                       http.Header
	Host, RemoteAddr                                             string
	ContentLength                                                int64
	TransferEncoding                                             []string
	Close, NoBody                                                bool
	ID, Rest                                                     string
}

func viewRequest(w http.ResponseWriter, r *http.Request) {
	v := requestView{
		Method: r.Method, RequestURI: r.RequestURI, Path: r.URL.Path, RawPath: r.URL.RawPath,
		RawQuery: r.URL.RawQuery, Scheme: r.URL.Scheme, URLHost: r.URL.Host,
		Proto: r.Proto, ProtoMajor: r.ProtoMajor, ProtoMinor: r.ProtoMinor,
		Header: r.Header, Host: r.Host, RemoteAddr: r.RemoteAddr,
		ContentLength: r.ContentLength, TransferEncoding: r.TransferEncoding,
		Close: r.Close, NoBody: r.Body == http.NoBody,
		ID: r.PathValue("id"), Rest: r.PathValue("rest"),
	}
	io.Copy(io.Discard, r.Body)
	json.NewEncoder(w).Encode(v)
}

// TestRequestFields: the *http.Request a net/http handler gets carries what net/http's own
// server would put there, for each form of request.
func TestRequestFields(t *testing.T) {
	r := New()
	r.HandleHTTP("GET", "/users/:id/*rest", http.HandlerFunc(viewRequest))
	r.HandleHTTP("POST", "/users/:id/*rest", http.HandlerFunc(viewRequest))
	r.Mount("/m", http.HandlerFunc(viewRequest))
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})
	cl := coretest.Dial(t, addr)
	get := func(req string) requestView {
		t.Helper()
		cl.Send(req)
		resp, body := cl.Response("GET")
		if resp.StatusCode != 200 {
			t.Fatalf("%q: status %d %s", req, resp.StatusCode, body)
		}
		var v requestView
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("%q: %v in %s", req, err, body)
		}
		return v
	}

	v := get("GET /users/42/a%20b/c?x=1&y=%32 HTTP/1.1\r\nHost: example.com\r\nx-multi: one\r\n" +
		"X-Multi: two\r\naccept: */*\r\nPragma: no-cache\r\n\r\n")
	want := requestView{
		Method: "GET", RequestURI: "/users/42/a%20b/c?x=1&y=%32", Path: "/users/42/a b/c",
		RawQuery: "x=1&y=%32", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"X-Multi": {"one", "two"}, "Accept": {"*/*"}, "Pragma": {"no-cache"},
			"Cache-Control": {"no-cache"}},
		Host: "example.com", ContentLength: 0, NoBody: true, ID: "42", Rest: "/a b/c",
	}
	v.RemoteAddr, want.RemoteAddr = checkRemote(t, v.RemoteAddr, cl), ""
	if got, exp := fmt.Sprint(v), fmt.Sprint(want); got != exp {
		t.Errorf("origin form:\n got %s\nwant %s", got, exp)
	}

	v = get("GET http://other.example:8080/users/7/x HTTP/1.1\r\nHost: example.com\r\n\r\n")
	if v.Scheme != "http" || v.URLHost != "other.example:8080" || v.Host != "other.example:8080" ||
		v.Path != "/users/7/x" || v.ID != "7" || v.RequestURI != "http://other.example:8080/users/7/x" {
		t.Errorf("absolute form: %+v", v)
	}

	v = get("POST /users/1/x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello")
	if v.ContentLength != 5 || v.NoBody || v.TransferEncoding != nil || v.Header.Get("Content-Length") != "5" {
		t.Errorf("Content-Length body: %+v", v)
	}
	v = get("POST /users/1/x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
	if v.ContentLength != -1 || v.NoBody || fmt.Sprint(v.TransferEncoding) != "[chunked]" ||
		v.Header["Transfer-Encoding"] != nil {
		t.Errorf("chunked body: %+v", v)
	}

	v = get("GET /m/debug/x HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
	if v.Path != "/m/debug/x" || !v.Close || v.Header.Get("Connection") != "close" {
		t.Errorf("mounted: %+v", v)
	}

	c10 := coretest.Dial(t, addr)
	c10.Send("GET /m HTTP/1.0\r\n\r\n")
	resp, body := c10.Response("GET")
	json.Unmarshal([]byte(body), &v)
	if resp.StatusCode != 200 || v.Proto != "HTTP/1.0" || v.ProtoMinor != 0 || !v.Close || v.Host != "" ||
		v.Path != "/m" {
		t.Errorf("HTTP/1.0: %d %+v", resp.StatusCode, v)
	}
}

// checkRemote checks that a RemoteAddr is the client's "ip:port" and returns "".
func checkRemote(t *testing.T, remote string, cl *coretest.Conn) string {
	t.Helper()
	if remote != cl.LocalAddr().String() {
		t.Errorf("RemoteAddr %q, want the client's %q", remote, cl.LocalAddr())
	}
	return ""
}

// TestRequestHeaderOwned: the header map, path values and other strings are the handler's own:
// a handler that keeps them past its return (in a goroutine, a cache) sees them unchanged after
// later requests on the same connection reuse the server's memory.
func TestRequestHeaderOwned(t *testing.T) {
	kept := make(chan *http.Request, 2)
	r := New()
	r.HandleHTTP("GET", "/k/:id", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kept <- r
	}))
	_, addr := coretest.Serve(t, r.Handler(), core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET /k/first HTTP/1.1\r\nHost: h\r\nX-Value: aaaaaaaa\r\n\r\n")
	cl.Response("GET")
	cl.Send("GET /k/second HTTP/1.1\r\nHost: h\r\nX-Value: bbbbbbbb\r\n\r\n")
	cl.Response("GET")
	first := <-kept
	<-kept
	if first.PathValue("id") != "first" || first.Header.Get("X-Value") != "aaaaaaaa" ||
		first.URL.Path != "/k/first" || first.RequestURI != "/k/first" {
		t.Errorf("kept request changed: id %q, X-Value %q, path %q", first.PathValue("id"),
			first.Header.Get("X-Value"), first.URL.Path)
	}
}

// TestRequestQueryAndForm: the request works with net/http's own helpers, which parse what
// the bridge filled in.
func TestRequestQueryAndForm(t *testing.T) {
	_, addr := coretest.Serve(t, nethttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		fmt.Fprintf(w, "q=%s a=%s b=%s", r.URL.Query().Get("q"), r.Form.Get("a"), r.PostForm.Get("b"))
	})), core.Options{})
	resp, err := http.Post("http://"+addr+"/?q=x%20y&a=1", "application/x-www-form-urlencoded",
		strings.NewReader("b=2&a=3"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "q=x y a=3 b=2" {
		t.Errorf("got %q", b)
	}
}

// TestRequestBadTarget: a target the server takes but net/url refuses (an absolute-form target
// with an invalid port) is answered 400, as net/http's server answers it, without running the
// handler, and the connection closes.
func TestRequestBadTarget(t *testing.T) {
	_, addr := coretest.Serve(t, nethttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("handler ran for %q", r.RequestURI)
	})), core.Options{})
	cl := coretest.Dial(t, addr)
	cl.Send("GET http://h:xx/ HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, body := cl.Response("GET"); resp.StatusCode != 400 || !strings.Contains(body, "invalid port") {
		t.Errorf("status %d %q", resp.StatusCode, body)
	}
	cl.ExpectEOF()
}
