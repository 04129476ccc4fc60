package oteldwell

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/internal/labels"
)

// errorType returns the error.type of a finished response, or "" for one that succeeded: the
// kind of Done.Err when the response did not end normally (a short, fixed name per error the
// core reports, so that the attribute stays bounded), else the status code for a 5xx, as the
// semantic conventions ask.
func errorType(d core.Done) string {
	if d.Err != nil {
		return errKind(d.Err)
	}
	if d.Status >= 500 {
		return labels.Status(d.Status)
	}
	return ""
}

// errKind names the errors a core.Done reports. Anything else (a malformed chunked body,
// whose errors the core does not export) is "_OTHER".
func errKind(err error) string {
	var pe *core.PanicError
	switch {
	case err == core.ErrClosed:
		return "client_closed"
	case err == core.ErrShutdown:
		return "shutdown"
	case err == core.ErrDeadline:
		return "deadline_exceeded"
	case err == core.ErrTimeout:
		return "timeout"
	case err == core.ErrBodyTooLarge:
		return "body_too_large"
	case err == io.ErrUnexpectedEOF:
		return "body_truncated"
	case err == core.ErrAbortHandler:
		return "aborted"
	case errors.As(err, &pe):
		return "panic"
	}
	return "_OTHER"
}

// splitHost splits a Host field into server.address and server.port: "example.com:8080" is
// "example.com" and 8080, "[::1]:80" is "::1" and 80; a host without a port (or with one that
// is not a port number) has port 0.
func splitHost(h string) (host string, port int) {
	rest := ""
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return h, 0
		}
		host, rest = h[1:end], h[end+1:]
	} else if i := strings.IndexByte(h, ':'); i >= 0 && strings.IndexByte(h[i+1:], ':') < 0 {
		host, rest = h[:i], h[i:]
	} else {
		return h, 0 // no port, or an IPv6 address without brackets
	}
	if p, ok := strings.CutPrefix(rest, ":"); ok {
		if n, err := strconv.ParseUint(p, 10, 16); err == nil {
			port = int(n)
		}
	}
	return host, port
}
