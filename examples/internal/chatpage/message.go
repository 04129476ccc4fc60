package chatpage

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TimeFormat is how a message's time is written: RFC 3339 in UTC with milliseconds, which
// JavaScript's Date parses.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// TrimName returns a sender's name without the white space around it; an empty name stands for
// no name.
func TrimName(name string) string { return strings.TrimFunc(name, isBlank) }

// Check applies the limits of a message, which the page applies too, to its text and its
// trimmed name, and returns the status and message of a refusal, or 0: 400 for a blank text or
// a name with control characters, 413 for a text or a name over its limit.
func Check(text, name string) (status int, msg string) {
	if strings.TrimFunc(text, isBlank) == "" {
		return 400, "the text is empty"
	}
	if n := utf8.RuneCountInString(text); n > MaxTextChars {
		return 413, fmt.Sprintf("text of %d characters, over the limit of %d", n, MaxTextChars)
	}
	if n := len(text); n > MaxTextBytes {
		return 413, fmt.Sprintf("text of %d bytes in UTF-8, over the limit of %d", n, MaxTextBytes)
	}
	if n := utf8.RuneCountInString(name); n > MaxNameChars {
		return 413, fmt.Sprintf("name of %d characters, over the limit of %d", n, MaxNameChars)
	}
	if strings.ContainsFunc(name, unicode.IsControl) {
		return 400, "the name has control characters"
	}
	return 0, ""
}

// isBlank reports whether r is white space to JavaScript's String.trim or to Go's
// unicode.IsSpace, so that the page and the servers agree on what a blank text is.
func isBlank(r rune) bool {
	return unicode.IsSpace(r) || r == '\uFEFF'
}
