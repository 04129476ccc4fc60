package session

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzDecode: whatever a cookie holds, decoding it never panics and ends one of three ways —
// a session that round-trips, or the zero value with ErrNoSession, ErrInvalid or ErrExpired.
// The seeds (testdata/fuzz/FuzzDecode) are values sealed under the store's keys, fresh or
// expired or of another type, and broken ones, so that the fuzzer starts from the format.
func FuzzDecode(f *testing.F) {
	s := testStore[login](f, "session", 1, 2)
	f.Add(s.sealValue(f, login{User: "ada", Admin: true}))
	f.Add(s.sealValue(f, login{User: strings.Repeat("é", 100)}))
	f.Fuzz(func(t *testing.T, value string) {
		v, err := s.decode(value)
		switch {
		case err == nil:
			again, err := s.decode(s.sealValue(t, v))
			if err != nil || again != v {
				t.Fatalf("%q decodes to %+v, which seals and decodes to %+v, %v", value, v, again, err)
			}
		case errors.Is(err, ErrNoSession), errors.Is(err, ErrInvalid), errors.Is(err, ErrExpired):
			if v != (login{}) {
				t.Fatalf("%q: %+v with the error %v", value, v, err)
			}
		default:
			t.Fatalf("%q: an error of no kind: %v", value, err)
		}
	})
}

// TestFuzzSeeds: the seeds of FuzzDecode are what their names say, so that the fuzzer starts
// from sealed values: valid ones decode, under either key; the others are refused as named.
func TestFuzzSeeds(t *testing.T) {
	s := testStore[login](t, "session", 1, 2)
	want := map[string]error{
		"valid": nil, "valid_second_key": nil, "expired": ErrExpired, "other_type": ErrInvalid,
		"tampered": ErrInvalid, "not_base64": ErrInvalid, "empty": ErrNoSession,
	}
	files, _ := filepath.Glob("testdata/fuzz/FuzzDecode/*")
	if len(files) != len(want) {
		t.Fatalf("seeds %q, want %d", files, len(want))
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		head, arg, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
		value, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(arg, "string("), ")"))
		if head != "go test fuzz v1" || err != nil {
			t.Fatalf("%s: not a seed: %q", file, b)
		}
		name := filepath.Base(file)
		w, ok := want[name]
		if !ok {
			t.Fatalf("%s: an unknown seed", file)
		}
		if _, err := s.decode(value); w == nil && err != nil || w != nil && !errors.Is(err, w) {
			t.Errorf("%s: %v, want %v", name, err, w)
		}
	}
}
