package nethttp

import (
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/dwellhttp/dwell/internal/syntax"
)

// snapshot appends the response header fields to dst as name, value pairs, the way net/http
// writes them: names sorted (case-insensitively, so that spellings of one name sit together),
// an invalid name dropped, CR, LF and other control bytes in a value made spaces and the value
// trimmed. It reports the declared Content-Length (-1 for none) and whether the handler set the
// content's type or encoding, which rule out sniffing. For an interim response the fields that
// frame a final one (Content-Length, Connection) are left out; a 304 has neither Content-Type
// nor Content-Length, as net/http sends it. A Content-Type the handler set empty or nil, or
// left out beside a Content-Encoding, is passed on as an empty one, which gives the response
// none (core's default would otherwise label it text/plain, where net/http sends no type).
func (w *responseWriter) snapshot(dst []string, interim bool) (fields []string, declLen int64, typed bool) {
	declLen = -1
	var keyArr [24]string
	keys := keyArr[:0]
	for k := range w.header {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, syntax.CompareFold)
	notModified := !interim && w.status == http.StatusNotModified
	hasType, noType, encoded := false, false, false
	for _, k := range keys {
		vs := w.header[k]
		if strings.EqualFold(k, "Content-Type") && !interim && !notModified && (len(vs) == 0 || vs[0] == "") {
			noType = true // set empty, or nil as net/http's way to suppress it
			continue
		}
		if len(vs) == 0 || !syntax.IsToken(k) { // net/http drops a field whose name is no token (RFC 9110 §5.1)
			continue
		}
		switch {
		case notModified && (strings.EqualFold(k, "Content-Type") || strings.EqualFold(k, "Content-Length")):
			continue
		case strings.EqualFold(k, "Content-Length"):
			if interim {
				continue
			}
			v := strings.Trim(vs[0], " \t")
			n, ok := syntax.ParseContentLength(v)
			if !ok {
				slog.Warn("dwell: invalid Content-Length from a net/http handler; dropped", "value", vs[0])
				continue
			}
			declLen = n
			dst = append(dst, k, v)
			continue
		case strings.EqualFold(k, "Connection"):
			if interim {
				continue
			}
		case strings.EqualFold(k, "Content-Type"):
			hasType = true
		case strings.EqualFold(k, "Content-Encoding"):
			encoded = true
		case strings.EqualFold(k, "Transfer-Encoding"), strings.EqualFold(k, "Trailer"),
			strings.HasPrefix(k, http.TrailerPrefix):
			continue // the server frames the body; trailers go after it (see trailers)
		}
		for _, v := range vs {
			dst = append(dst, k, cleanValue(v))
		}
	}
	if !interim && (noType || encoded && !hasType) {
		dst = append(dst, "Content-Type", "") // no type at all
	}
	return dst, declLen, hasType || noType || encoded
}

// trailers appends the response's trailers to dst as name, value pairs, as net/http sends them:
// the fields named with http.TrailerPrefix, and those the Trailer field declared before the
// head went out, with the values they have when the handler returns. Several values of one
// name are joined into one list; an invalid name is dropped, a value cleaned as a header's.
func (w *responseWriter) trailers(dst []string) []string {
	add := func(name string, vs []string) {
		if len(vs) == 0 || !syntax.IsToken(name) {
			return
		}
		v := cleanValue(vs[0])
		for _, more := range vs[1:] {
			v += ", " + cleanValue(more)
		}
		dst = append(dst, name, v)
	}
	for k, vs := range w.header {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok {
			add(name, vs)
		}
	}
	for _, decl := range w.declared {
		add(decl, w.header[decl])
	}
	return dst
}

// cleanValue makes v safe to send, as net/http does: control bytes (CR and LF among them,
// which would split the response) become spaces, and surrounding spaces and tabs go. The
// common value needs neither and is returned as it is.
func cleanValue(v string) string {
	clean := true
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			clean = false
			break
		}
	}
	if !clean {
		b := []byte(v)
		for i, c := range b {
			if c < ' ' && c != '\t' || c == 0x7f {
				b[i] = ' '
			}
		}
		v = string(b)
	}
	return strings.Trim(v, " \t")
}
