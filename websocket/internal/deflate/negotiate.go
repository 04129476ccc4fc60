package deflate

import (
	"strconv"
	"strings"
)

// Name is the extension's name in Sec-WebSocket-Extensions (RFC 7692 §7).
const Name = "permessage-deflate"

// Params are the agreed parameters of permessage-deflate (RFC 7692 §7.1), as Negotiate
// accepted them. The server builds its side of the connection from them:
//
//	NewCompressor(!p.ServerNoContextTakeover, p.ServerMaxWindowBits)
//	NewDecompressor(!p.ClientNoContextTakeover)
type Params struct {
	// ServerNoContextTakeover: the server compresses each message with an empty window
	// (§7.1.1.1), and holds no compressor between messages.
	ServerNoContextTakeover bool
	// ClientNoContextTakeover: the client does (§7.1.1.2), so the server keeps no window of
	// the messages it inflates.
	ClientNoContextTakeover bool
	// ServerMaxWindowBits is the base-2 logarithm of the largest window the server's
	// compressor may use (§7.1.2.1): what the client asked for, or 15 (32 KiB).
	ServerMaxWindowBits int
	// ClientMaxWindowBits is the largest window the client's compressor uses (§7.1.2.2): the
	// value its offer promised, or 15. The response never limits it, since an inflater with the
	// full window reads any smaller one.
	ClientMaxWindowBits int
}

// Negotiate picks the first permessage-deflate offer among offers that the server can accept,
// in the client's order of preference (RFC 7692 §5), and returns the agreed parameters and
// the Sec-WebSocket-Extensions value to answer with. ok is false when there is none: the server
// then answers with no permessage-deflate, and messages go uncompressed.
//
// An offer is declined (and the next one tried, §5) when it has a parameter RFC 7692 does not
// define, a parameter twice, a *_no_context_takeover with a value, server_max_window_bits with
// no value, or a window size that is not a decimal 8 to 15 without leading zeros (§7.1.2.1,
// §7.1.2.2).
//
// The response:
//
//   - server_no_context_takeover when the client asked for it (§7.1.1.1: accepting means
//     saying so), and always unless allowContextTakeover: the server may add it unasked, and
//     without it a compressor must stay with each connection between messages;
//   - client_no_context_takeover when the client asked for it, and always unless
//     allowContextTakeover (§7.1.1.2: a server may add it unasked), so that the server keeps no
//     window of what it inflates;
//   - server_max_window_bits=N, echoed, when the client asked for a window of 2^N (§7.1.2.1).
//     compress/flate cannot make a window smaller than 32 KiB; below 15 the Compressor honours
//     the limit by making no back-references at all (flate.HuffmanOnly), which is valid within
//     any window, at the cost of compressing by Huffman coding alone;
//   - never client_max_window_bits: it is optional in a response (§7.1.2.2), and the
//     Decompressor takes any window.
func Negotiate(offers []Extension, allowContextTakeover bool) (agreed Params, response string, ok bool) {
	for _, o := range offers {
		if !strings.EqualFold(o.Name, Name) {
			continue
		}
		asked, echoBits, ok := acceptOffer(o)
		if !ok {
			continue
		}
		agreed = asked
		agreed.ServerNoContextTakeover = asked.ServerNoContextTakeover || !allowContextTakeover
		agreed.ClientNoContextTakeover = asked.ClientNoContextTakeover || !allowContextTakeover
		var b strings.Builder
		b.WriteString(Name)
		if agreed.ServerNoContextTakeover {
			b.WriteString("; server_no_context_takeover")
		}
		if agreed.ClientNoContextTakeover {
			b.WriteString("; client_no_context_takeover")
		}
		if echoBits {
			b.WriteString("; server_max_window_bits=")
			b.WriteString(strconv.Itoa(agreed.ServerMaxWindowBits))
		}
		return agreed, b.String(), true
	}
	return Params{}, "", false
}

// acceptOffer reads one permessage-deflate offer: what the client asked for, whether it named
// server_max_window_bits (which the response must then echo), and whether the offer is one the
// server can accept.
func acceptOffer(o Extension) (asked Params, echoBits, ok bool) {
	asked.ServerMaxWindowBits, asked.ClientMaxWindowBits = 15, 15
	var seen [4]bool
	for _, p := range o.Params {
		var i int
		switch {
		case strings.EqualFold(p.Name, "server_no_context_takeover"):
			i = 0
			asked.ServerNoContextTakeover = true
			if p.HasValue {
				return Params{}, false, false // §7.1.1.1: the parameter has no value
			}
		case strings.EqualFold(p.Name, "client_no_context_takeover"):
			i = 1
			asked.ClientNoContextTakeover = true
			if p.HasValue {
				return Params{}, false, false // §7.1.1.2: no value
			}
		case strings.EqualFold(p.Name, "server_max_window_bits"):
			i = 2
			bits, valid := windowBits(p.Value)
			if !p.HasValue || !valid {
				return Params{}, false, false // §7.1.2.1: a value, 8 to 15
			}
			asked.ServerMaxWindowBits, echoBits = bits, true
		case strings.EqualFold(p.Name, "client_max_window_bits"):
			i = 3
			if p.HasValue { // §7.1.2.2: no value, or 8 to 15
				bits, valid := windowBits(p.Value)
				if !valid {
					return Params{}, false, false
				}
				asked.ClientMaxWindowBits = bits
			}
		default:
			return Params{}, false, false // §7.1: a parameter not defined for an offer declines it
		}
		if seen[i] {
			return Params{}, false, false // §7.1: a parameter named twice declines the offer
		}
		seen[i] = true
	}
	return asked, echoBits, true
}

// windowBits parses a window size (§7.1.2.1, §7.1.2.2): a decimal integer from 8 to 15, with
// no leading zeros.
func windowBits(v string) (int, bool) {
	switch {
	case len(v) == 1 && v[0] >= '8' && v[0] <= '9':
		return int(v[0] - '0'), true
	case len(v) == 2 && v[0] == '1' && v[1] >= '0' && v[1] <= '5':
		return 10 + int(v[1]-'0'), true
	}
	return 0, false
}
