package http1

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// randomRequest builds a random valid HTTP/1.1 request: a token method, an origin-form target with
// percent-escapes and a query, random fields, and a body framed by Content-Length or chunked.
func randomRequest(r *rand.Rand) string {
	const tchars = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	const pchars = "abcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@"
	pick := func(set string, n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteByte(set[r.IntN(len(set))])
		}
		return sb.String()
	}
	methods := []string{"GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 1+r.IntN(8))}
	method := methods[r.IntN(len(methods))]
	var target strings.Builder
	for range 1 + r.IntN(4) {
		target.WriteByte('/')
		target.WriteString(pick(pchars, r.IntN(8)))
		if r.IntN(3) == 0 {
			fmt.Fprintf(&target, "%%%02X", 0x20+r.IntN(0x5f))
		}
	}
	if r.IntN(2) == 0 {
		target.WriteString("?" + pick("abc", 1+r.IntN(3)) + "=" + pick(pchars+"/?", r.IntN(10)))
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, target.String(), pick("abcdefghij.", 1+r.IntN(10)))
	for range r.IntN(6) {
		name := pick(tchars, 1+r.IntN(12))
		switch strings.ToLower(name) {
		case "host", "content-length", "transfer-encoding", "expect", "connection", "trailer", "te":
			name = "X-" + name
		}
		value := pick(" !\"#$%&'()*+,-./0123456789:;<=>?@ABCXYZ[\\]^_`abcxyz{|}~", r.IntN(20))
		fmt.Fprintf(&sb, "%s:%s%s%s\r\n", name, strings.Repeat(" ", r.IntN(3)), value, strings.Repeat("\t", r.IntN(2)))
	}
	body := pick("abcdefghijklmnopqrstuvwxyz\r\n\x00\xff", r.IntN(300))
	switch r.IntN(3) {
	case 0:
		if len(body) > 0 {
			fmt.Fprintf(&sb, "Content-Length: %d\r\n\r\n%s", len(body), body)
		} else {
			sb.WriteString("\r\n")
		}
	case 1:
		sb.WriteString("Transfer-Encoding: chunked\r\n\r\n")
		for rest := body; len(rest) > 0; {
			n := min(len(rest), 1+r.IntN(64))
			fmt.Fprintf(&sb, "%x\r\n%s\r\n", n, rest[:n])
			rest = rest[n:]
		}
		sb.WriteString("0\r\n\r\n")
	default:
		sb.WriteString("\r\n")
	}
	return sb.String()
}

// describeRequest is the canonical form both sides are compared in.
func describeRequest(method, target string, fields [][2]string, body []byte) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s\n", method, target)
	for _, f := range fields {
		fmt.Fprintf(&sb, "%s: %q\n", strings.ToLower(f[0]), f[1])
	}
	fmt.Fprintf(&sb, "body %d %x\n", len(body), sha256.Sum256(body))
	return sb.String()
}

// TestDifferentialWithNetHTTP feeds the same random valid requests to dwell and to net/http's
// http.ReadRequest and compares method, target, fields and body.
func TestDifferentialWithNetHTTP(t *testing.T) {
	_, addr := startServer(t, func(c *serve.Ctx) {
		var fields [][2]string
		for k, v := range c.Headers() {
			switch strings.ToLower(k) {
			case "content-length", "transfer-encoding":
				continue // framing: net/http moves these out of Header
			}
			fields = append(fields, [2]string{k, v})
		}
		body, err := io.ReadAll(readerFunc(c.ReadBody))
		if err != nil {
			c.SetStatus(400)
			return
		}
		c.WriteString(describeRequest(c.Method(), c.Target(), fields, body))
	}, serve.Options{})
	c := dial(t, addr)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		raw := randomRequest(r)
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil {
			t.Fatalf("net/http refused a generated request %q: %v", raw, err)
		}
		body, _ := io.ReadAll(req.Body)
		var fields [][2]string
		for _, line := range strings.Split(raw[strings.Index(raw, "\r\n")+2:strings.Index(raw, "\r\n\r\n")], "\r\n") {
			name, _, _ := strings.Cut(line, ":")
			switch strings.ToLower(name) {
			case "content-length", "transfer-encoding":
				continue
			}
			// net/http keeps fields by canonical name, in order within a name.
			vals := req.Header.Values(name)
			if name == "Host" || strings.EqualFold(name, "host") {
				vals = []string{req.Host}
			}
			if len(vals) == 0 {
				t.Fatalf("net/http lost field %q of %q", name, raw)
			}
			fields = append(fields, [2]string{name, vals[0]})
			req.Header[http.CanonicalHeaderKey(name)] = vals[1:]
		}
		want := describeRequest(req.Method, req.RequestURI, fields, body)
		c.Send(raw)
		resp, got := c.Response(req.Method)
		if resp.StatusCode != 200 || got != want {
			t.Fatalf("request %d %q\ndwell:    %d %q\nnet/http: %q", i, raw, resp.StatusCode, got, want)
		}
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
