package deflate

import (
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestNegotiate(t *testing.T) {
	full := func(p Params) Params { // the defaults of §7.1.2: a 32 KiB window each way
		if p.ServerMaxWindowBits == 0 {
			p.ServerMaxWindowBits = 15
		}
		if p.ClientMaxWindowBits == 0 {
			p.ClientMaxWindowBits = 15
		}
		return p
	}
	noTakeover := full(Params{ServerNoContextTakeover: true, ClientNoContextTakeover: true})
	const both = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
	tests := []struct {
		name     string
		offer    string
		takeover bool // allowContextTakeover
		want     Params
		response string // "" when every offer is declined
	}{
		// RFC 7692's simplest offer, "permessage-deflate", answered by the server's simplest
		// response, "permessage-deflate", when it allows context takeover...
		{"simplest", "permessage-deflate", true, full(Params{}), "permessage-deflate"},
		// ... and with both no_context_takeover parameters added unasked when it does not
		// (§7.1.1.1, §7.1.1.2: a server may include them).
		{"simplest, no takeover", "permessage-deflate", false, noTakeover, both},
		// RFC 7692's offer with client_max_window_bits (no value): the client can limit its
		// window if told to; the server need not, and does not (§7.1.2.2).
		{"client_max_window_bits", "permessage-deflate; client_max_window_bits", true, full(Params{}), "permessage-deflate"},
		{"client_max_window_bits=10", "permessage-deflate; client_max_window_bits=10", true, full(Params{ClientMaxWindowBits: 10}), "permessage-deflate"},
		// RFC 7692's two offers: the first asks for a 2^10 window from the server, which is
		// accepted, and echoed (§7.1.2.1); the second is the fallback.
		{"two offers", "permessage-deflate; client_max_window_bits; server_max_window_bits=10, permessage-deflate; client_max_window_bits", true,
			full(Params{ServerMaxWindowBits: 10}), "permessage-deflate; server_max_window_bits=10"},
		// §7.1.1.1: a server accepts server_no_context_takeover by including it.
		{"server_no_context_takeover asked", "permessage-deflate; server_no_context_takeover", true,
			full(Params{ServerNoContextTakeover: true}), "permessage-deflate; server_no_context_takeover"},
		// §7.1.1.2: client_no_context_takeover, when asked, is answered so that the server
		// keeps no window.
		{"client_no_context_takeover asked", "permessage-deflate; client_no_context_takeover", true,
			full(Params{ClientNoContextTakeover: true}), "permessage-deflate; client_no_context_takeover"},
		{"names in any case", "PerMessage-Deflate; SERVER_MAX_WINDOW_BITS=12", false, full(Params{ServerNoContextTakeover: true, ClientNoContextTakeover: true, ServerMaxWindowBits: 12}),
			both + "; server_max_window_bits=12"},
		{"quoted value", `permessage-deflate; server_max_window_bits="9"`, false, full(Params{ServerNoContextTakeover: true, ClientNoContextTakeover: true, ServerMaxWindowBits: 9}),
			both + "; server_max_window_bits=9"},
		{"other extensions first", "x-webkit-deflate-frame, permessage-deflate", false, noTakeover, both},

		// Declined offers (§7.1: a parameter not defined, an invalid value, a parameter twice).
		{"unknown parameter", "permessage-deflate; mux", true, Params{}, ""},
		{"parameter twice", "permessage-deflate; client_no_context_takeover; client_no_context_takeover", true, Params{}, ""},
		{"window twice", "permessage-deflate; server_max_window_bits=10; server_max_window_bits=10", true, Params{}, ""},
		{"server_max_window_bits without value", "permessage-deflate; server_max_window_bits", true, Params{}, ""},
		{"window of 7", "permessage-deflate; server_max_window_bits=7", true, Params{}, ""},
		{"window of 16", "permessage-deflate; client_max_window_bits=16", true, Params{}, ""},
		{"leading zero", "permessage-deflate; server_max_window_bits=09", true, Params{}, ""},
		{"not digits", "permessage-deflate; server_max_window_bits=1a", true, Params{}, ""},
		{"sign", "permessage-deflate; client_max_window_bits=+9", true, Params{}, ""},
		{"no_context_takeover with a value", "permessage-deflate; server_no_context_takeover=1", true, Params{}, ""},
		{"no permessage-deflate", "x-webkit-deflate-frame", true, Params{}, ""},
		// A declined offer gives way to the next.
		{"first declined", "permessage-deflate; server_max_window_bits=7, permessage-deflate; client_max_window_bits", false, noTakeover, both},
	}
	for _, tt := range tests {
		got, resp, ok, err := Negotiate([]string{tt.offer}, tt.takeover)
		if err != nil || ok != (tt.response != "") || got != tt.want || resp != tt.response {
			t.Errorf("%s: Negotiate = %+v, %q, %v, %v; want %+v, %q", tt.name, got, resp, ok, err, tt.want, tt.response)
		}
	}
}

// TestNegotiateAutobahn: the offers of Autobahn's cases 13.1-13.7, as its client writes them
// (PerMessageDeflateOffer.get_extension_string: client_no_context_takeover and
// client_max_window_bits always), for a server that allows context takeover and one that does
// not. The client asks for client_no_context_takeover every time, so the server gets it.
func TestNegotiateAutobahn(t *testing.T) {
	const base = "permessage-deflate; client_no_context_takeover; client_max_window_bits"
	tests := []struct {
		name, offer string
		takeover    string // the response when the server allows context takeover
		none        string // the response when it does not
	}{
		{"13.1", base, "permessage-deflate; client_no_context_takeover",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover"},
		{"13.2", base + "; server_no_context_takeover",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover"},
		{"13.3", base + "; server_max_window_bits=9",
			"permessage-deflate; client_no_context_takeover; server_max_window_bits=9",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=9"},
		{"13.4", base + "; server_max_window_bits=15",
			"permessage-deflate; client_no_context_takeover; server_max_window_bits=15",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=15"},
		{"13.5", base + "; server_no_context_takeover; server_max_window_bits=9",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=9",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=9"},
		{"13.6", base + "; server_no_context_takeover; server_max_window_bits=15",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=15",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=15"},
		// 13.7: three offers, the first acceptable.
		{"13.7", base + "; server_no_context_takeover; server_max_window_bits=9, " + base + "; server_no_context_takeover, " + base,
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=9",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=9"},
		// 13.7's offers behind one that is not acceptable (a window of 8 bits is, 7 is not).
		{"13.7 after a bad offer", base + "; server_max_window_bits=7, " + base + "; server_no_context_takeover, " + base,
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover"},
	}
	for _, tt := range tests {
		for _, allow := range []bool{true, false} {
			want := tt.none
			if allow {
				want = tt.takeover
			}
			_, resp, ok, err := Negotiate([]string{tt.offer}, allow)
			if err != nil || !ok || resp != want {
				t.Errorf("%s (allow takeover %v): %q, %v, %v; want %q", tt.name, allow, resp, ok, err, want)
			}
		}
	}
	// Every window size §7.1.2.1 allows, 8 to 15, is accepted and echoed.
	for bits := 8; bits <= 15; bits++ {
		p, resp, ok, err := Negotiate([]string{base + "; server_max_window_bits=" + strconv.Itoa(bits)}, true)
		if err != nil || !ok || p.ServerMaxWindowBits != bits || !strings.HasSuffix(resp, "; server_max_window_bits="+strconv.Itoa(bits)) {
			t.Errorf("server_max_window_bits=%d: %+v, %q, %v, %v", bits, p, resp, ok, err)
		}
	}
}

// TestNegotiateResponses: every response there is — each combination of the no_context_takeover
// parameters asked for or not, of server_max_window_bits absent or 8 to 15, and of the server
// allowing context takeover or not — is the one the reference writes with a strings.Builder, so
// that the table of responses holds no typo.
func TestNegotiateResponses(t *testing.T) {
	seen := make(map[string]bool)
	for asked := range 4 {
		for bits := 7; bits <= 15; bits++ {
			offer := Name
			if asked&1 != 0 {
				offer += "; server_no_context_takeover"
			}
			if asked&2 != 0 {
				offer += "; client_no_context_takeover"
			}
			if bits > 7 {
				offer += "; server_max_window_bits=" + strconv.Itoa(bits)
			}
			for _, allow := range []bool{true, false} {
				p, resp, ok, err := Negotiate([]string{offer}, allow)
				rp, rresp, rok, rerr := reference([]string{offer}, allow)
				if p != rp || resp != rresp || ok != rok || err != rerr || !ok {
					t.Errorf("%q (allow takeover %v): %+v, %q, %v, %v; want %+v, %q, %v, %v", offer, allow, p, resp, ok, err, rp, rresp, rok, rerr)
				}
				seen[resp] = true
			}
		}
	}
	if len(seen) != len(responses)*len(responses[0]) {
		t.Errorf("%d responses seen, the table has %d", len(seen), len(responses)*len(responses[0]))
	}
}

// TestNegotiateKeepsNothing: the lines may be strings over borrowed bytes (unsafe.String), as
// the server's handshake lends them: what Negotiate returns is unchanged when the bytes are
// overwritten after the call.
func TestNegotiateKeepsNothing(t *testing.T) {
	for _, offer := range []string{
		"permessage-deflate; client_max_window_bits",
		`permessage-deflate; server_no_context_takeover; server_max_window_bits="1\2"`,
	} {
		buf := []byte(offer)
		p, resp, ok, err := Negotiate([]string{unsafe.String(unsafe.SliceData(buf), len(buf))}, true)
		want, wantResp, _, _ := reference([]string{offer}, true)
		for i := range buf {
			buf[i] = 'x'
		}
		if err != nil || !ok || p != want || resp != wantResp {
			t.Errorf("%q: %+v, %q, %v, %v; want %+v, %q", offer, p, resp, ok, err, want, wantResp)
		}
	}
}
