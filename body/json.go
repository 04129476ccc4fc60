package body

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"reflect"
	"strings"

	"github.com/dwellhttp/dwell/core"
)

// JSONOptions tunes ReadJSON. The zero value reads a body of up to 1 MiB and, as
// json.Unmarshal does, ignores object keys that v has no field for.
type JSONOptions struct {
	// Limit bounds the body in bytes. Zero means DefaultLimit (1 MiB); negative means no bound
	// of ReadJSON's own (core.Options.MaxBodyBytes and core.Seam.LimitBody still apply).
	Limit int64

	// DisallowUnknownFields refuses (400) an object key that v has no field for, as
	// json.Decoder.DisallowUnknownFields does, so that a misspelt field is an error rather
	// than a value silently left out.
	DisallowUnknownFields bool
}

// ReadJSON reads the request body, one JSON value, into v, as json.Unmarshal does. It refuses
// with an *Error (see Error for the statuses):
//
//   - 415 a body whose Content-Type is not application/json (nor application/*+json), one
//     with a charset other than UTF-8, or one with a content coding (Content-Encoding: gzip;
//     the response then says Accept-Encoding: identity), before reading anything;
//   - 413 a body over the limit, at once when its Content-Length says so (the client then
//     need not send it, and gets no 100 Continue), with the response set to 413 and
//     Connection: close as ReadAll does;
//   - 400 an empty body, malformed JSON, a value of the wrong type for its field, an unknown
//     field when asked, or anything but white space after the value; the message names the
//     field (its dotted path through the objects it lies in: "items.title" for a title in
//     the array items) and the byte offset — for an unknown field, when its name is a key
//     only once in the body (the decoder does not say where it was).
//
// Other errors are those of a body that broke on the wire (see Error), which the server
// answers itself if the handler writes nothing, or *json.InvalidUnmarshalError for a v that is
// not a non-nil pointer. Call ReadJSON from c's handler: reading the body may park it.
func ReadJSON(c *core.Ctx, v any, o JSONOptions) error {
	if err := checkJSONType(c); err != nil {
		return err
	}
	b, err := readLimited(c, o.Limit)
	if err != nil {
		return err
	}
	return decodeJSON(b, v, o.DisallowUnknownFields)
}

// WriteJSON answers with v encoded by json.Marshal, followed by a newline, with status and
// Content-Type: application/json. It writes nothing and returns the error when v cannot be
// encoded (a channel, a cycle), so that the handler can answer 500 instead. Set any other
// header field before calling it. It may be called from the handler or a continuation.
func WriteJSON(c *core.Ctx, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.SetHeader("Content-Type", "application/json")
	c.SetStatus(status)
	_, err = c.Write(append(b, '\n'))
	return err
}

// checkJSONType refuses a body that does not say it is JSON.
func checkJSONType(c *core.Ctx) error {
	ctb, ok := c.Bytes().Header("Content-Type")
	ct := string(ctb)
	if !ok && c.Seam().BodyDone() { // no body at all (an HTTP/2 one may have no length)
		return &Error{Status: 400, Msg: "request body is empty; want a JSON value"}
	}
	if err := checkUnencoded(c); err != nil {
		return err
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || !(mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return &Error{Status: 415, Msg: fmt.Sprintf("Content-Type %q is not JSON; want application/json", ct), Err: err}
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return &Error{Status: 415, Msg: fmt.Sprintf("JSON in charset %q; want UTF-8", cs)}
	}
	return nil
}

// decodeJSON decodes the JSON text b into v, turning the decoder's errors into 400 Errors that
// name the field and the offset.
func decodeJSON(b []byte, v any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return jsonError(b, err)
	}
	end := dec.InputOffset()
	if rest := bytes.TrimLeft(b[end:], " \t\r\n"); len(rest) > 0 {
		return &Error{Status: 400, Msg: fmt.Sprintf("data after the JSON value, at byte offset %d", int64(len(b)-len(rest)))}
	}
	return nil
}

// jsonError describes a decoding error for the client.
func jsonError(b []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var inv *json.InvalidUnmarshalError
	switch {
	case errors.As(err, &inv):
		return err // the handler's mistake, not the client's
	case err == io.EOF:
		return &Error{Status: 400, Msg: "request body is empty; want a JSON value", Err: err}
	case err == io.ErrUnexpectedEOF:
		return &Error{Status: 400, Msg: fmt.Sprintf("JSON value cut short at byte offset %d", len(b)), Err: err}
	case errors.As(err, &syn):
		return &Error{Status: 400, Msg: fmt.Sprintf("malformed JSON at byte offset %d: %s", syn.Offset, syn.Error()), Err: err}
	case errors.As(err, &typ):
		what := "JSON value"
		if typ.Field != "" {
			what = fmt.Sprintf("JSON field %q", typ.Field)
		}
		return &Error{Status: 400, Msg: fmt.Sprintf("%s: got %s, want %s (byte offset %d)", what, jsonValueKind(typ.Value, typ.Type), jsonKind(typ.Type), typ.Offset), Err: err}
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, `json: unknown field "`); ok {
		name = strings.TrimSuffix(name, `"`)
		if off := keyOffset(b, name); off >= 0 {
			return &Error{Status: 400, Msg: fmt.Sprintf("JSON field %q is unknown (byte offset %d)", name, off), Err: err}
		}
		return &Error{Status: 400, Msg: fmt.Sprintf("JSON field %q is unknown", name), Err: err}
	}
	// An error of a field's own UnmarshalJSON (a malformed time, say): the client's value.
	return &Error{Status: 400, Msg: "bad JSON value: " + strings.TrimPrefix(msg, "json: "), Err: err}
}

// jsonValueKind names the JSON value a json.UnmarshalTypeError found for a Go value of type t,
// in the words jsonKind uses: json says "bool", and "number 1.5" for a number its type cannot
// hold — a fraction or an exponent for an integer, else a number out of the type's range.
func jsonValueKind(v string, t reflect.Type) string {
	switch {
	case v == "bool":
		return "boolean"
	case strings.HasPrefix(v, "number "):
		n := strings.TrimPrefix(v, "number ")
		if strings.ContainsAny(n, ".eE") && isInteger(t) {
			return "number " + n + " (not an integer)"
		}
		return "number " + n + " (out of range)"
	}
	return v
}

// isInteger reports whether t (or what it points to) is a Go integer type.
func isInteger(t reflect.Type) bool {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t != nil && (t.Kind() >= reflect.Int && t.Kind() <= reflect.Uintptr)
}

// jsonKind names the JSON a Go type takes, for messages meant for clients.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return t.String()
}

// keyOffset returns the byte offset just past the object key named name in the JSON text b,
// or -1: the decoder reports an unknown field without saying where it was. A name that is a
// key more than once (a map's key before the struct's unknown field, say) is -1 too: which
// one was refused is not known, and a wrong offset would mislead.
func keyOffset(b []byte, name string) int64 {
	const (
		inArray   = iota
		wantKey   // in an object, a key comes next
		wantValue // in an object, after a key
	)
	dec := json.NewDecoder(bytes.NewReader(b))
	var stack []byte
	found := int64(-1)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return found
		}
		if err != nil {
			return -1
		}
		top := len(stack) - 1
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				if t == '{' {
					stack = append(stack, wantKey)
				} else {
					stack = append(stack, inArray)
				}
				continue
			}
			stack = stack[:top]
			top--
		case string:
			if top >= 0 && stack[top] == wantKey {
				if t == name {
					if found >= 0 {
						return -1
					}
					found = dec.InputOffset()
				}
				stack[top] = wantValue
				continue
			}
		}
		// A value ended: in an object, a key comes next.
		if top >= 0 && stack[top] == wantValue {
			stack[top] = wantKey
		}
	}
}
