package chatroom

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

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
	name := chatpage.TrimName(in.Name)
	if status, msg := chatpage.Check(*in.Text, name); status != 0 {
		fail(c, status, msg)
		return
	}
	m := rm.publish(message{ID: uuid.NewString(), Name: name, Text: *in.Text})

	c.SetStatus(201)
	c.SetHeader("Content-Type", "application/json")
	c.WriteString(`{"id":"` + m.ID + `","seq":` + strconv.FormatUint(m.Seq, 10) + `,"time":"` + m.Time + "\"}\n")
}
