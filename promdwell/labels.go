package promdwell

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// series is what one combination of labels records into.
type series struct {
	duration, requestSize, responseSize prometheus.Observer
}

// seriesKey names a combination of labels.
type seriesKey struct {
	method, route, scheme string
	status                int
}

// statusText returns a status code's decimal form without allocating for the codes HTTP
// uses.
func statusText(code int) string {
	if code >= 0 && code < len(statusTexts) {
		return statusTexts[code]
	}
	return strconv.Itoa(code)
}

var statusTexts = func() (t [600]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return
}()
