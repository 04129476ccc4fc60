package chatroom

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/examples/internal/chatpage"
	"github.com/google/uuid"
)

// post handles POST /messages {"text": "...", "name": "..."}: 201 {"id", "seq", "time"}. It
// answers 400 for bad JSON, a text missing or blank, a name with control characters; 413 for a
// text or name over its limit, or a body over maxBody. A body that breaks off or stalls is
// answered by the server (400, 408).
func (rm *Room) post(c *core.Ctx) {
	b, err := body.ReadAll(c, maxBody)
	switch {
	case errors.Is(err, core.ErrBodyTooLarge):
		fail(c, 413, fmt.Sprintf("request body over %d KiB", maxBody>>10))
		return
	case err != nil:
		return
	}
	var in struct {
		Text *string `json:"text"`
		Name string  `json:"name"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		fail(c, 400, "bad JSON: "+err.Error())
		return
	}
	if in.Text == nil {
		fail(c, 400, `"text" is missing`)
		return
	}
	name := strings.TrimFunc(in.Name, isBlank)
	if status, msg := check(*in.Text, name); status != 0 {
		fail(c, status, msg)
		return
	}
	m := rm.publish(message{ID: uuid.NewString(), Name: name, Text: *in.Text})

	c.SetStatus(201)
	c.SetHeader("Content-Type", "application/json")
	c.WriteString(`{"id":"` + m.ID + `","seq":` + strconv.FormatUint(m.Seq, 10) + `,"time":"` + m.Time + "\"}\n")
}

// check applies the limits of a message (chatpage's, which the page applies too) to its text
// and its trimmed name, and returns the status and message of a refusal, or 0.
func check(text, name string) (int, string) {
	if strings.TrimFunc(text, isBlank) == "" {
		return 400, "the text is empty"
	}
	if n := utf8.RuneCountInString(text); n > chatpage.MaxTextChars {
		return 413, fmt.Sprintf("text of %d characters, over the limit of %d", n, chatpage.MaxTextChars)
	}
	if n := len(text); n > chatpage.MaxTextBytes {
		return 413, fmt.Sprintf("text of %d bytes in UTF-8, over the limit of %d", n, chatpage.MaxTextBytes)
	}
	if n := utf8.RuneCountInString(name); n > chatpage.MaxNameChars {
		return 413, fmt.Sprintf("name of %d characters, over the limit of %d", n, chatpage.MaxNameChars)
	}
	if strings.ContainsFunc(name, unicode.IsControl) {
		return 400, "the name has control characters"
	}
	return 0, ""
}

// isBlank reports whether r is white space to JavaScript's String.trim or to Go's
// unicode.IsSpace, so that the page and the server agree on what a blank text is.
func isBlank(r rune) bool {
	return unicode.IsSpace(r) || r == '\uFEFF'
}
