package nethttp

import (
	"io"
	"net/http"
	"net/url"
	"strings"
)

// request builds the *http.Request for the handler, on its goroutine, from what collect
// copied: as net/http's server reads one (readRequest), with body as r.Body when the request
// has one.
func (x *exchange) request(body *bodyReader) (*http.Request, error) {
	u, err := parseTarget(x.method, x.target)
	if err != nil {
		return nil, err
	}
	r := http.Request{
		Method:        x.method,
		URL:           u,
		Proto:         x.proto,
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        x.header(),
		Host:          x.host,
		RemoteAddr:    x.remote,
		RequestURI:    x.target,
		ContentLength: x.contentLength,
		Body:          http.NoBody,
		TLS:           x.tls,
	}
	switch x.proto {
	case "HTTP/1.0":
		r.ProtoMinor = 0
	case "HTTP/2.0":
		r.ProtoMajor, r.ProtoMinor = 2, 0
	}
	switch {
	case x.chunked:
		r.TransferEncoding = []string{"chunked"}
		r.ContentLength = -1
		r.Trailer = declaredTrailer(r.Header)
		delete(r.Header, "Trailer") // r.Trailer says it, as net/http has it
		r.Body = body
	case x.hasBody:
		r.Body = body
	default:
		r.ContentLength = 0
	}
	if r.ProtoMajor == 1 {
		r.Close = shouldClose(r.ProtoMinor, r.Header["Connection"])
	}
	rc := r.WithContext(x.ctx)
	for i := 0; i < len(x.params); i += 2 {
		rc.SetPathValue(x.params[i], x.params[i+1])
	}
	return rc, nil
}

// parseTarget parses the request-target as net/http does: an origin-form path, an
// absolute-form URL, "*", or the authority of a CONNECT.
func parseTarget(method, target string) (*url.URL, error) {
	if method == http.MethodConnect && !strings.HasPrefix(target, "/") {
		u, err := url.ParseRequestURI("http://" + target)
		if err != nil {
			return nil, err
		}
		u.Scheme = ""
		return u, nil
	}
	return url.ParseRequestURI(target)
}

// header builds the request's header map: canonical keys, values in the order received, one
// backing array for all of them (as net/textproto does). Transfer-Encoding and Content-Length
// of a chunked body are net/http's to leave out: r.TransferEncoding says it.
func (x *exchange) header() http.Header {
	n := len(x.fields) / 2
	h := make(http.Header, n)
	vals := make([]string, 0, n)
	for i := 0; i < len(x.fields); i += 2 {
		key := http.CanonicalHeaderKey(x.fields[i])
		if x.chunked && (key == "Transfer-Encoding" || key == "Content-Length") {
			continue
		}
		v := x.fields[i+1]
		if old, ok := h[key]; ok {
			h[key] = append(old, v)
			continue
		}
		vals = append(vals, v)
		h[key] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	// RFC 9111 §5.4: Pragma: no-cache means Cache-Control: no-cache when that is absent, as
	// net/http's server has it for HTTP/1 (Pragma is HTTP/1.0's).
	if p, ok := h["Pragma"]; ok && len(p) > 0 && p[0] == "no-cache" && x.proto != "HTTP/2.0" {
		if _, ok := h["Cache-Control"]; !ok {
			h["Cache-Control"] = []string{"no-cache"}
		}
	}
	return h
}

// declaredTrailer returns the trailer fields the request announced (Trailer), with no values
// yet, or nil.
func declaredTrailer(h http.Header) http.Header {
	var t http.Header
	for _, v := range h["Trailer"] {
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				if t == nil {
					t = make(http.Header)
				}
				t[http.CanonicalHeaderKey(name)] = nil
			}
		}
	}
	return t
}

// shouldClose reports whether the connection ends after this request: HTTP/1.0 unless the
// client asked to keep it (and not also to close it), HTTP/1.1 when the client asked to close
// it (RFC 9112 §9.3).
func shouldClose(minor int, connection []string) bool {
	keep, close := false, false
	for _, v := range connection {
		for opt := range strings.SplitSeq(v, ",") {
			opt = strings.TrimSpace(opt)
			keep = keep || strings.EqualFold(opt, "keep-alive")
			close = close || strings.EqualFold(opt, "close")
		}
	}
	if minor == 0 {
		return close || !keep
	}
	return close
}

// mergeTrailer adds the trailer fields that arrived (name, value, ...) to r.Trailer.
func mergeTrailer(r *http.Request, fields []string) {
	if r.Trailer == nil {
		r.Trailer = make(http.Header, len(fields)/2)
	}
	for i := 0; i < len(fields); i += 2 {
		key := http.CanonicalHeaderKey(fields[i])
		r.Trailer[key] = append(r.Trailer[key], fields[i+1])
	}
}

var _ io.ReadCloser = (*bodyReader)(nil)
