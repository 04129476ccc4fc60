package deflate

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseExtensions(t *testing.T) {
	pmd := func(params ...Param) Extension { return Extension{Name: "permessage-deflate", Params: params} }
	flag := func(name string) Param { return Param{Name: name} }
	val := func(name, v string) Param { return Param{Name: name, Value: v, HasValue: true} }
	tests := []struct {
		name   string
		values []string
		want   []Extension
	}{
		{"bare", []string{"permessage-deflate"}, []Extension{pmd()}},
		// What Chromium and Firefox send.
		{"Chromium", []string{"permessage-deflate; client_max_window_bits"}, []Extension{pmd(flag("client_max_window_bits"))}},
		// RFC 6455 §9.1: extension-param = token [ "=" (token | quoted-string) ].
		{"values", []string{"permessage-deflate;client_max_window_bits=10;server_no_context_takeover"},
			[]Extension{pmd(val("client_max_window_bits", "10"), flag("server_no_context_takeover"))}},
		{"quoted value", []string{`permessage-deflate; server_max_window_bits="10"`}, []Extension{pmd(val("server_max_window_bits", "10"))}},
		{"quoted-pair", []string{`x; a="1\0"`}, []Extension{{Name: "x", Params: []Param{val("a", "10")}}}},
		// RFC 6455 §9.1: offers in order of preference, in one list...
		{"two offers", []string{"permessage-deflate; client_max_window_bits; server_max_window_bits=10, permessage-deflate; client_max_window_bits"},
			[]Extension{pmd(flag("client_max_window_bits"), val("server_max_window_bits", "10")), pmd(flag("client_max_window_bits"))}},
		// ... or in several field lines (§9.1: "MAY appear multiple times"; RFC 7230 §3.2.2).
		{"field lines", []string{"foo", "bar; baz=2"}, []Extension{{Name: "foo"}, {Name: "bar", Params: []Param{val("baz", "2")}}}},
		// Optional whitespace around the separators (RFC 6455 §4.1's implied *LWS).
		{"whitespace", []string{" a ; b = c ,\td\t;\te "}, []Extension{{Name: "a", Params: []Param{val("b", "c")}}, {Name: "d", Params: []Param{flag("e")}}}},
		// RFC 7230 §7: "a recipient MUST accept and ignore" empty list elements.
		{"empty elements", []string{", a,, b ,"}, []Extension{{Name: "a"}, {Name: "b"}}},
		{"empty field value", []string{""}, nil},
		{"no field", nil, nil},
		{"case kept", []string{"PerMessage-Deflate; Server_No_Context_Takeover"},
			[]Extension{{Name: "PerMessage-Deflate", Params: []Param{flag("Server_No_Context_Takeover")}}}},
		{"token characters", []string{"x-!#$%&'*+.^_`|~1; y=!#$%&'*+-.^_`|~"}, []Extension{{Name: "x-!#$%&'*+.^_`|~1", Params: []Param{val("y", "!#$%&'*+-.^_`|~")}}}},
	}
	for _, tt := range tests {
		got, err := ParseExtensions(tt.values)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: ParseExtensions(%q) = %+v, %v; want %+v", tt.name, tt.values, got, err, tt.want)
		}
	}
}

func TestParseExtensionsMalformed(t *testing.T) {
	for _, v := range []string{
		"a;",             // §9.1: ";" must be followed by an extension-param
		"a; =1",          // a parameter's name is a token
		"a; b=",          // "=" must be followed by a value
		"a b",            // two tokens with no separator
		"a;b=c d",        // a value with a space in it
		`a; b="c d"`,     // §9.1: a quoted value must be a token once unescaped
		`a; b=""`,        // ... and a token is not empty
		`a; b="c`,        // no closing quote
		`a; b="c\`,       // an escape at the end
		"a; b=\"c\x01\"", // RFC 7230 §3.2.6: no control character in a quoted-string
		"=a",             // no name
		"a=1",            // an extension with a value
		"a; b=c=d",       // a second "="
		"a;;b",           // an empty parameter
		"a; b=c; ",       // a trailing ";"
		"ä",              // not a token
		"a\r\nb",         // a line break
		"a, b c",         // the second element broken
		`"a"`,            // a quoted name
	} {
		if got, err := ParseExtensions([]string{"ok", v}); err != ErrMalformed || got != nil {
			t.Errorf("ParseExtensions(%q) = %+v, %v; want ErrMalformed", v, got, err)
		}
	}
}

func TestExtensionString(t *testing.T) {
	in := []string{"permessage-deflate; client_max_window_bits; server_max_window_bits=10, x;y", `z; q="1\5"`}
	exts, err := ParseExtensions(in)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range exts {
		out = append(out, e.String())
	}
	if got := strings.Join(out, ", "); got != "permessage-deflate; client_max_window_bits; server_max_window_bits=10, x; y, z; q=15" {
		t.Errorf("String: %q", got)
	}
	back, err := ParseExtensions([]string{strings.Join(out, ", ")})
	if err != nil || !reflect.DeepEqual(back, exts) {
		t.Errorf("parsed back as %+v, %v", back, err)
	}
}
