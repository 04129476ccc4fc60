package deflate

import "github.com/dwellhttp/dwell/internal/syntax"

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

// Negotiate reads the Sec-WebSocket-Extensions field lines of a client's handshake, values,
// and picks the first permessage-deflate offer among them that the server can accept, in the
// client's order of preference (RFC 7692 §5). It returns the agreed parameters and the
// Sec-WebSocket-Extensions value to answer with; ok is false when no offer is acceptable: the
// server then answers with no permessage-deflate, and messages go uncompressed.
//
// The lines are read in one pass, with no allocation and no copy. Negotiate keeps nothing of
// them, and returns nothing that refers to them (response is one of a few constant strings):
// the caller may lend it strings over bytes it borrowed (unsafe.String), valid for the call.
//
// The lines must follow the syntax of RFC 6455 §9.1, described in extensions.go: every line's
// comma-separated list, in order, empty elements ignored (RFC 7230 §7), a quoted value
// unescaped and then a token. Anything else is ErrMalformed, for the whole set, whatever came
// before: a server cannot accept part of a list it cannot read. ok is then false.
//
// An offer is declined (and the next one tried, §5) when it has a parameter RFC 7692 does not
// define, a parameter twice, a *_no_context_takeover with a value, server_max_window_bits with
// no value, or a window size that is not a decimal 8 to 15 without leading zeros (§7.1.2.1,
// §7.1.2.2). Extension names and parameter names compare without regard to case, as tokens.
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
func Negotiate(values []string, allowContextTakeover bool) (agreed Params, response string, ok bool, err error) {
	var best offer // the first acceptable permessage-deflate offer, once found
	for _, line := range values {
		sc := scanner{s: line}
		for {
			name, valid := sc.extension()
			if !valid {
				return Params{}, "", false, ErrMalformed
			}
			if name == "" {
				break // the line's end
			}
			// Once an offer is accepted, the rest is only read for its syntax.
			judge := !best.accepted && syntax.EqualFold(name, Name)
			o := offer{accepted: true}
			for {
				pname, hasValue, bits, more, valid := sc.param()
				if !valid {
					return Params{}, "", false, ErrMalformed
				}
				if !more {
					break
				}
				if judge && o.accepted {
					o.accepted = o.param(pname, hasValue, bits)
				}
			}
			if judge {
				best = o
			}
		}
	}
	if !best.accepted {
		return Params{}, "", false, nil
	}
	return best.response(allowContextTakeover)
}

// offer is what a permessage-deflate offer asks for, as its parameters are read (§7.1).
type offer struct {
	accepted   bool  // the offer is acceptable so far
	seen       uint8 // a bit for each parameter named, in the order of offer.param's cases
	serverNoCT bool  // server_no_context_takeover
	clientNoCT bool  // client_no_context_takeover
	serverBits int8  // server_max_window_bits, 8 to 15; 0 when not named
	clientBits int8  // client_max_window_bits's value, 8 to 15; 0 when none
}

// param takes the offer's next parameter: its name, whether it has a value, and the value as
// windowDigit reads a window size. It reports whether the offer is still one the server can
// accept.
func (o *offer) param(name string, hasValue bool, bits int) bool {
	var bit uint8
	switch {
	case syntax.EqualFold(name, "server_no_context_takeover"):
		bit, o.serverNoCT = 1<<0, true
		if hasValue {
			return false // §7.1.1.1: the parameter has no value
		}
	case syntax.EqualFold(name, "client_no_context_takeover"):
		bit, o.clientNoCT = 1<<1, true
		if hasValue {
			return false // §7.1.1.2: no value
		}
	case syntax.EqualFold(name, "server_max_window_bits"):
		bit, o.serverBits = 1<<2, int8(bits)
		if !hasValue || bits < 8 {
			return false // §7.1.2.1: a value, 8 to 15
		}
	case syntax.EqualFold(name, "client_max_window_bits"):
		bit = 1 << 3
		if hasValue { // §7.1.2.2: no value, or 8 to 15
			if bits < 8 {
				return false
			}
			o.clientBits = int8(bits)
		}
	default:
		return false // §7.1: a parameter not defined for an offer declines it
	}
	if o.seen&bit != 0 {
		return false // §7.1: a parameter named twice declines the offer
	}
	o.seen |= bit
	return true
}

// response returns the agreed parameters of an accepted offer, and the response to it.
func (o *offer) response(allowContextTakeover bool) (agreed Params, response string, ok bool, err error) {
	agreed = Params{
		ServerNoContextTakeover: o.serverNoCT || !allowContextTakeover,
		ClientNoContextTakeover: o.clientNoCT || !allowContextTakeover,
		ServerMaxWindowBits:     15,
		ClientMaxWindowBits:     15,
	}
	var row, col int
	if agreed.ServerNoContextTakeover {
		row |= 1
	}
	if agreed.ClientNoContextTakeover {
		row |= 2
	}
	if o.serverBits != 0 {
		agreed.ServerMaxWindowBits, col = int(o.serverBits), int(o.serverBits)-7
	}
	if o.clientBits != 0 {
		agreed.ClientMaxWindowBits = int(o.clientBits)
	}
	return agreed, responses[row][col], true, nil
}

// The parts of a response (§7.1), in the order it has them.
const (
	respNone   = Name
	respServer = Name + "; server_no_context_takeover"
	respClient = Name + "; client_no_context_takeover"
	respBoth   = Name + "; server_no_context_takeover; client_no_context_takeover"
	respBits   = "; server_max_window_bits="
)

// responses are every response Negotiate gives, so that none is built for a handshake:
// responses[row][0] with no server_max_window_bits, responses[row][n-7] echoing it as n, for
// the rows none, server_no_context_takeover, client_no_context_takeover, both. Made of
// constants, the table is static data: no allocation even at init.
var responses = [4][9]string{
	{respNone, respNone + respBits + "8", respNone + respBits + "9", respNone + respBits + "10", respNone + respBits + "11",
		respNone + respBits + "12", respNone + respBits + "13", respNone + respBits + "14", respNone + respBits + "15"},
	{respServer, respServer + respBits + "8", respServer + respBits + "9", respServer + respBits + "10", respServer + respBits + "11",
		respServer + respBits + "12", respServer + respBits + "13", respServer + respBits + "14", respServer + respBits + "15"},
	{respClient, respClient + respBits + "8", respClient + respBits + "9", respClient + respBits + "10", respClient + respBits + "11",
		respClient + respBits + "12", respClient + respBits + "13", respClient + respBits + "14", respClient + respBits + "15"},
	{respBoth, respBoth + respBits + "8", respBoth + respBits + "9", respBoth + respBits + "10", respBoth + respBits + "11",
		respBoth + respBits + "12", respBoth + respBits + "13", respBoth + respBits + "14", respBoth + respBits + "15"},
}
