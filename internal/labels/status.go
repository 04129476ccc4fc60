package labels

import "strconv"

// Status returns a status code's decimal form — the http_response_status_code label, a 5xx's
// error.type — without allocating for the codes HTTP uses (0 to 599).
func Status(code int) string {
	if code >= 0 && code < len(statusTexts) {
		return statusTexts[code]
	}
	return strconv.Itoa(code)
}

// statusTexts is the one table of decimal status codes, made once.
var statusTexts = func() (t [600]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return
}()
