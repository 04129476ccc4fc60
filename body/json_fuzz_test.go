package body

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzDecodeJSON: whatever the body, decodeJSON never panics, fails only with a 400 Error, and
// succeeds exactly when encoding/json accepts the text as one value for the type (with the
// same check for unknown fields); an unknown field's offset, when found, is just past a key.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"title":"a","done":true}`, `{"title":5}`, `{"items":[{"title":"x","y":1}]}`, `[1,2]`,
		`{"title":"a"} {}`, `{"t\"itle":1}`, `{"title":"\u0041"}`, " \n", `{"a":{"b":[{"c":{}}]}}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, strict bool) {
		type item struct {
			Title string `json:"title"`
		}
		var got struct {
			Title string `json:"title"`
			Done  bool   `json:"done"`
			Items []item `json:"items"`
		}
		want := got
		err := decodeJSON(b, &got, strict)
		var e *Error
		if err != nil && (!errors.As(err, &e) || e.Status != 400 || e.Msg == "") {
			t.Fatalf("error %#v", err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		if strict {
			dec.DisallowUnknownFields()
		}
		ref := dec.Decode(&want)
		if ref == nil && len(bytes.TrimLeft(b[dec.InputOffset():], " \t\r\n")) > 0 {
			ref = errors.New("data after the value")
		}
		if (err == nil) != (ref == nil) {
			t.Fatalf("decodeJSON %v, encoding/json %v", err, ref)
		}
	})
}

// FuzzKeyOffset: keyOffset finds a key only where one ends, and never panics.
func FuzzKeyOffset(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":{"c":[{"d":2}]}}`), "d")
	f.Add([]byte(`["d",{"e":"d","d":0}]`), "d")
	f.Add([]byte(`{"x\"y":1}`), `x"y`)
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		off := keyOffset(b, name)
		if off < 0 {
			return
		}
		if off > int64(len(b)) || b[off-1] != '"' {
			t.Fatalf("offset %d in %q", off, b)
		}
	})
}
