package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

type login struct {
	User  string `json:"user"`
	Admin bool   `json:"admin,omitempty"`
}

// fixedNow is the clock of the tests here: the seeds of FuzzDecode expire a year after it.
var fixedNow = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// testStore returns a Store[T] named name with keys of the bytes given, on the fixed clock.
func testStore[T any](t testing.TB, name string, keys ...byte) *Store[T] {
	t.Helper()
	o := Options{Name: name, MaxAge: 365 * 24 * time.Hour, Now: func() time.Time { return fixedNow }}
	for _, b := range keys {
		o.Keys = append(o.Keys, bytes.Repeat([]byte{b}, KeySize))
	}
	s, err := New[T](o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sealValue returns the cookie value Save would write for v, which may be of another type than T.
func (s *Store[T]) sealValue(t testing.TB, v any) string {
	t.Helper()
	payload, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return s.cd.seal(payload, s.now().Add(s.maxAge))
}

// TestTamper: changing any byte of a sealed value — version, nonce, ciphertext or tag, each
// bit flipped alone, or the whole byte — makes it ErrInvalid; so does changing any character
// of its base64url, cutting it short anywhere, or lengthening it.
func TestTamper(t *testing.T) {
	s := testStore[login](t, "session", 1)
	value := s.sealValue(t, login{User: "ada"})
	if v, err := s.decode(value); err != nil || v.User != "ada" {
		t.Fatalf("untouched: %v, %v", v, err)
	}
	raw, err := encoding.DecodeString(value)
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		for _, mask := range []byte{0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff} {
			b := bytes.Clone(raw)
			b[i] ^= mask
			if v, err := s.decode(encoding.EncodeToString(b)); !errors.Is(err, ErrInvalid) || v != (login{}) {
				t.Fatalf("byte %d ^ %#x: %v, %v; want ErrInvalid", i, mask, v, err)
			}
		}
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range len(value) {
		for _, ch := range []byte(alphabet + "+/=.!") {
			if ch == value[i] {
				continue
			}
			v := value[:i] + string(ch) + value[i+1:]
			if _, err := s.decode(v); !errors.Is(err, ErrInvalid) {
				t.Fatalf("character %d as %q: %v; want ErrInvalid", i, ch, err)
			}
		}
	}
	for n := 1; n < len(value); n++ {
		if _, err := s.decode(value[:n]); !errors.Is(err, ErrInvalid) {
			t.Fatalf("cut to %d: %v; want ErrInvalid", n, err)
		}
	}
	for _, tail := range []string{"A", "AA", "AAA", "AAAA", "="} {
		if _, err := s.decode(value + tail); !errors.Is(err, ErrInvalid) {
			t.Fatalf("with %q added: %v; want ErrInvalid", tail, err)
		}
	}
}

// TestRefusals: each reason to refuse a value, with its error.
func TestRefusals(t *testing.T) {
	s := testStore[login](t, "session", 1)
	good := s.sealValue(t, login{User: "ada"})
	raw, _ := encoding.DecodeString(good)
	version2 := append([]byte{2}, raw[1:]...)
	expired := testStore[login](t, "session", 1)
	expired.now = func() time.Time { return fixedNow.Add(-expired.maxAge) }
	cases := []struct {
		name, value string
		err         error
		detail      string
	}{
		{"empty", "", ErrNoSession, "no session cookie"},
		{"not base64", "a.b", ErrInvalid, "it is not base64url"},
		{"padded", good + "==", ErrInvalid, "it is not base64url"},
		{"standard alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(good) + "+/", ErrInvalid, "it is not base64url"},
		{"too short", "AQID", ErrInvalid, "it is too short to be sealed"},
		{"too long", strings.Repeat("A", 4097), ErrInvalid, "it is longer than a browser keeps"},
		{"other version", encoding.EncodeToString(version2), ErrInvalid, "it is of an unknown format"},
		{"other key", testStore[login](t, "session", 2).sealValue(t, login{User: "ada"}), ErrInvalid, "none of the keys opens it"},
		{"other name", testStore[login](t, "other", 1).sealValue(t, login{User: "ada"}), ErrInvalid, "none of the keys opens it"},
		{"expired", expired.sealValue(t, login{User: "ada"}), ErrExpired, "it expired at 2030-01-02T03:04:05Z"},
		{"not the type's JSON", s.sealValue(t, map[string]int{"user": 5}), ErrInvalid, "it does not decode into the Store's type"},
		{"not JSON", s.cd.seal([]byte("{"), fixedNow.Add(time.Hour)), ErrInvalid, "it does not decode into the Store's type"},
	}
	for _, tc := range cases {
		v, err := s.decode(tc.value)
		if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.detail) || v != (login{}) {
			t.Errorf("%s: %v, %v; want %v saying %q", tc.name, v, err, tc.err, tc.detail)
		}
		if err != nil && tc.err != ErrNoSession && !strings.Contains(err.Error(), `cookie "session"`) {
			t.Errorf("%s: %q does not name the cookie", tc.name, err)
		}
	}
	// The distinct kinds are distinct.
	for _, a := range []error{ErrNoSession, ErrInvalid, ErrExpired, ErrTooLarge} {
		for _, b := range []error{ErrNoSession, ErrInvalid, ErrExpired, ErrTooLarge} {
			if a != b && errors.Is(a, b) {
				t.Errorf("%v is %v", a, b)
			}
		}
	}
}

// TestFormat: a value is the version, the nonce, the ciphertext of the expiry and the JSON,
// and the tag, in base64url without padding: its length follows the JSON's.
func TestFormat(t *testing.T) {
	s := testStore[login](t, "session", 1)
	value := s.sealValue(t, login{User: "ada"})
	raw, err := encoding.DecodeString(value)
	if err != nil || strings.ContainsAny(value, "=+/") {
		t.Fatalf("%q: %v", value, err)
	}
	js := `{"user":"ada"}`
	if want := 1 + 12 + expirySize + len(js) + 16; len(raw) != want || raw[0] != formatVersion {
		t.Errorf("%d bytes starting %d, want %d starting %d", len(raw), raw[0], want, formatVersion)
	}
	if bytes.Contains(raw, []byte("ada")) {
		t.Error("the value shows in the cookie")
	}
}
