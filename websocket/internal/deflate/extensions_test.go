package deflate

import "testing"

// TestNegotiateSyntax: lists that follow RFC 6455 §9.1's grammar, read as they should be, which
// shows in what is negotiated from them; each agrees with the reference.
func TestNegotiateSyntax(t *testing.T) {
	full := Params{ServerMaxWindowBits: 15, ClientMaxWindowBits: 15}
	with := func(f func(*Params)) Params { p := full; f(&p); return p }
	tests := []struct {
		name     string
		values   []string
		want     Params
		response string // "" when nothing is agreed
	}{
		{"bare", []string{"permessage-deflate"}, full, Name},
		// What Chromium and Firefox send.
		{"Chromium", []string{"permessage-deflate; client_max_window_bits"}, full, Name},
		// §9.1: extension-param = token [ "=" (token | quoted-string) ].
		{"values", []string{"permessage-deflate;client_max_window_bits=10;server_no_context_takeover"},
			with(func(p *Params) { p.ClientMaxWindowBits, p.ServerNoContextTakeover = 10, true }), Name + "; server_no_context_takeover"},
		{"quoted value", []string{`permessage-deflate; server_max_window_bits="10"`},
			with(func(p *Params) { p.ServerMaxWindowBits = 10 }), Name + "; server_max_window_bits=10"},
		// RFC 7230 §3.2.6: a quoted-pair is the character escaped.
		{"quoted-pair", []string{`permessage-deflate; server_max_window_bits="1\0"`},
			with(func(p *Params) { p.ServerMaxWindowBits = 10 }), Name + "; server_max_window_bits=10"},
		{"quoted-pairs", []string{`permessage-deflate; client_max_window_bits="\1\1"`},
			with(func(p *Params) { p.ClientMaxWindowBits = 11 }), Name},
		{"quoted-pair elsewhere", []string{`x; a="1\0", permessage-deflate`}, full, Name},
		// §9.1: offers in order of preference, in one list...
		{"two offers", []string{"permessage-deflate; client_max_window_bits; server_max_window_bits=10, permessage-deflate; client_max_window_bits"},
			with(func(p *Params) { p.ServerMaxWindowBits = 10 }), Name + "; server_max_window_bits=10"},
		// ... or in several field lines (§9.1: "MAY appear multiple times"; RFC 7230 §3.2.2).
		{"field lines", []string{"foo", "bar; baz=2", "permessage-deflate; client_max_window_bits=9"},
			with(func(p *Params) { p.ClientMaxWindowBits = 9 }), Name},
		{"field lines, first declined", []string{"permessage-deflate; mux", "permessage-deflate; server_no_context_takeover"},
			with(func(p *Params) { p.ServerNoContextTakeover = true }), Name + "; server_no_context_takeover"},
		// Optional whitespace around the separators (RFC 6455 §4.1's implied *LWS).
		{"whitespace", []string{" a ; b = c ,\tpermessage-deflate\t;\tclient_max_window_bits = 12 ; server_max_window_bits\t=\t\"8\" "},
			with(func(p *Params) { p.ClientMaxWindowBits, p.ServerMaxWindowBits = 12, 8 }), Name + "; server_max_window_bits=8"},
		// RFC 7230 §7: "a recipient MUST accept and ignore" empty list elements.
		{"empty elements", []string{", a,, permessage-deflate ,", ","}, full, Name},
		{"empty field value", []string{""}, Params{}, ""},
		{"no field", nil, Params{}, ""},
		{"case", []string{"PerMessage-Deflate; Server_No_Context_Takeover"},
			with(func(p *Params) { p.ServerNoContextTakeover = true }), Name + "; server_no_context_takeover"},
		{"token characters", []string{"x-!#$%&'*+.^_`|~1; y=!#$%&'*+-.^_`|~; z=\"!#$%&'*+-.^_`|~\", permessage-deflate"}, full, Name},
		// A value that is a token, but no window size: the offer is declined, the list is valid.
		{"no window size", []string{`permessage-deflate; server_max_window_bits="x"`}, Params{}, ""},
	}
	for _, tt := range tests {
		got, resp, ok, err := Negotiate(tt.values, true)
		if err != nil || ok != (tt.response != "") || got != tt.want || resp != tt.response {
			t.Errorf("%s: Negotiate(%q) = %+v, %q, %v, %v; want %+v, %q", tt.name, tt.values, got, resp, ok, err, tt.want, tt.response)
		}
		rp, rresp, rok, rerr := reference(tt.values, true)
		if rp != got || rresp != resp || rok != ok || rerr != err {
			t.Errorf("%s: the reference says %+v, %q, %v, %v", tt.name, rp, rresp, rok, rerr)
		}
	}
}

// TestNegotiateMalformed: a line that does not follow the grammar refuses the whole set, before
// or after an acceptable offer, in the same line or another.
func TestNegotiateMalformed(t *testing.T) {
	for _, v := range []string{
		"a;",             // §9.1: ";" must be followed by an extension-param
		"a; =1",          // a parameter's name is a token
		"a; b=",          // "=" must be followed by a value
		"a b",            // two tokens with no separator
		"a;b=c d",        // a value with a space in it
		`a; b="c d"`,     // §9.1: a quoted value must be a token once unescaped
		`a; b="c\ d"`,    // ... even when the space is escaped
		`a; b="c\""`,     // ... and a '"' is no tchar either
		`a; b=""`,        // ... and a token is not empty
		`a; b="c`,        // no closing quote
		`a; b="c\`,       // an escape at the end
		"a; b=\"c\x01\"", // RFC 7230 §3.2.6: no control character in a quoted-string
		"a; b=\"c\\\x01\"",
		"=a",       // no name
		"a=1",      // an extension with a value
		"a; b=c=d", // a second "="
		"a;;b",     // an empty parameter
		"a; b=c; ", // a trailing ";"
		"ä",        // not a token
		"a\r\nb",   // a line break
		"a, b c",   // the second element broken
		`"a"`,      // a quoted name
		"permessage-deflate; server_max_window_bits=1 0", // a value broken
	} {
		for _, values := range [][]string{
			{"permessage-deflate", v},
			{v, "permessage-deflate"},
			{"permessage-deflate, " + v},
		} {
			if p, resp, ok, err := Negotiate(values, true); err != ErrMalformed || ok || resp != "" || p != (Params{}) {
				t.Errorf("Negotiate(%q) = %+v, %q, %v, %v; want ErrMalformed", values, p, resp, ok, err)
			}
			if _, _, _, err := reference(values, true); err != ErrMalformed {
				t.Errorf("the reference reads %q", values)
			}
		}
	}
}
