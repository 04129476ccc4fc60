package promdwell

import "strconv"

// statusText returns a status code's decimal form, the http_response_status_code label,
// without allocating for the codes HTTP uses.
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
