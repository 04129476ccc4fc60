package interop

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
)

// permessage-deflate (RFC 7692) on the suite's client: the offers it sent, the response it got
// checked against them, and the messages compressed and inflated as the agreed parameters say.

// An extension is one element of a Sec-WebSocket-Extensions list (RFC 6455 §9.1).
type extension struct {
	name   string
	params []extParam
}

type extParam struct {
	name, value string
	hasValue    bool
}

// parseExtensions reads the lists of Sec-WebSocket-Extensions field lines. The suite's offers
// and the server's responses have no quoted commas or semicolons, so a split is enough; a
// quoted value is unquoted.
func parseExtensions(lines []string) []extension {
	var exts []extension
	for _, line := range lines {
		for elem := range strings.SplitSeq(line, ",") {
			parts := strings.Split(elem, ";")
			e := extension{name: strings.TrimSpace(parts[0])}
			if e.name == "" {
				continue
			}
			for _, p := range parts[1:] {
				name, value, has := strings.Cut(p, "=")
				e.params = append(e.params, extParam{strings.TrimSpace(name), strings.Trim(strings.TrimSpace(value), `"`), has})
			}
			exts = append(exts, e)
		}
	}
	return exts
}

// pmdParams are the parameters of a permessage-deflate offer or response (§7.1).
type pmdParams struct {
	serverNoCT, clientNoCT bool
	serverBits             int // server_max_window_bits; 0 when absent
	clientBits             int // client_max_window_bits; 0 when absent, -1 when without a value
}

// readParams reads e's parameters, and reports whether they are valid: each known, at most
// once, with a value where one is required (a window size of 8 to 15 in decimal without
// leading zeros) and none where none is allowed. A response's client_max_window_bits needs a
// value (§7.1.2.2); an offer's may have none.
func readParams(e extension, response bool) (p pmdParams, ok bool) {
	seen := map[string]bool{}
	for _, q := range e.params {
		name := strings.ToLower(q.name)
		if seen[name] {
			return p, false // §7.1: a parameter twice
		}
		seen[name] = true
		switch name {
		case "server_no_context_takeover", "client_no_context_takeover":
			if q.hasValue {
				return p, false
			}
			if name == "server_no_context_takeover" {
				p.serverNoCT = true
			} else {
				p.clientNoCT = true
			}
		case "server_max_window_bits", "client_max_window_bits":
			bits := -1
			if q.hasValue {
				n, err := strconv.Atoi(q.value)
				if err != nil || n < 8 || n > 15 || strconv.Itoa(n) != q.value {
					return p, false
				}
				bits = n
			} else if name == "server_max_window_bits" || response {
				return p, false
			}
			if name == "server_max_window_bits" {
				p.serverBits = bits
			} else {
				p.clientBits = bits
			}
		default:
			return p, false
		}
	}
	return p, true
}

// accepts says why a response does not accept offer o, or "" when it does (§7.1): a
// server_no_context_takeover offered must be answered, a server_max_window_bits offered must be
// answered with the same or a smaller value, and client_max_window_bits may be answered only
// when offered, with at most the offer's value.
func (r pmdParams) accepts(o pmdParams) string {
	switch {
	case o.serverNoCT && !r.serverNoCT:
		return "server_no_context_takeover offered, not answered"
	case o.serverBits != 0 && (r.serverBits == 0 || r.serverBits > o.serverBits):
		return fmt.Sprintf("server_max_window_bits=%d offered, answered %d", o.serverBits, r.serverBits)
	case r.clientBits != 0 && (o.clientBits == 0 || o.clientBits > 0 && r.clientBits > o.clientBits):
		return fmt.Sprintf("client_max_window_bits=%d answered, %d offered", r.clientBits, o.clientBits)
	}
	return ""
}

// A pmdState is permessage-deflate on a connection, as agreed.
type pmdState struct {
	clientTakeover bool // the client may compress with its window kept (no client_no_context_takeover)
	clientBits     int  // the client's window, by its offer and the response
	serverTakeover bool // the server keeps its window (no server_no_context_takeover)
	serverBits     int  // the server's window, by the response

	// check has every compressed message of the server decoded by inflateChecked too, which
	// sees its back-references; it is always done below 15 bits.
	check bool

	w      *flate.Writer
	buf    bytes.Buffer
	window []byte // the server's last 32 KiB of compressed messages, inflated, with takeover
}

// negotiated checks the server's Sec-WebSocket-Extensions answer, resp, to the offers among
// the handshake's extra lines, and returns what was agreed, nil for nothing. A server that
// compresses must accept the first valid permessage-deflate offer (§5: the client's order is
// its preference), unless it cannot honour that offer's server_max_window_bits below 15 (a
// compressor that makes no window under 32 KiB cannot, unless it makes no back-references):
// then it must decline that offer and take a later acceptable one. A server that does not
// compress answers nothing. The takeover server answers the no_context_takeover parameters
// offered and none other.
func negotiated(t *testing.T, s *wsServer, extra, resp []string) *pmdState {
	t.Helper()
	var lines []string
	for _, e := range extra {
		if name, v, ok := strings.Cut(e, ":"); ok && strings.EqualFold(name, "Sec-WebSocket-Extensions") {
			lines = append(lines, v)
		}
	}
	type offer struct {
		p     pmdParams
		valid bool
	}
	var offers []offer
	for _, e := range parseExtensions(lines) {
		if strings.EqualFold(e.name, "permessage-deflate") {
			p, ok := readParams(e, false)
			offers = append(offers, offer{p, ok})
		}
	}
	answer := parseExtensions(resp)
	if len(answer) == 0 {
		for i, o := range offers {
			if s.compress && o.valid && (o.p.serverBits == 0 || o.p.serverBits == 15) {
				t.Fatalf("offer %d (%q) is acceptable, and was declined", i, lines)
			}
		}
		return nil
	}
	if !s.compress || len(answer) != 1 || !strings.EqualFold(answer[0].name, "permessage-deflate") {
		t.Fatalf("Sec-WebSocket-Extensions %q answering %q", resp, lines)
	}
	r, ok := readParams(answer[0], true)
	if !ok {
		t.Fatalf("Sec-WebSocket-Extensions %q: not a valid permessage-deflate response", resp)
	}
	var chosen *offer
	for i := range offers {
		o := &offers[i]
		if !o.valid {
			continue
		}
		why := r.accepts(o.p)
		if why == "" {
			chosen = o
			break
		}
		if o.p.serverBits == 0 || o.p.serverBits == 15 {
			t.Fatalf("Sec-WebSocket-Extensions %q does not accept offer %d of %q, which is acceptable: %s", resp, i, lines, why)
		}
	}
	if chosen == nil {
		t.Fatalf("Sec-WebSocket-Extensions %q accepts none of the valid offers of %q", resp, lines)
	}
	if s.takeover && (r.serverNoCT != chosen.p.serverNoCT || r.clientNoCT != chosen.p.clientNoCT) {
		t.Fatalf("Sec-WebSocket-Extensions %q: no_context_takeover not offered in %q", resp, lines)
	}
	st := &pmdState{clientTakeover: !r.clientNoCT, clientBits: 15, serverTakeover: !r.serverNoCT, serverBits: 15}
	if chosen.p.clientBits > 0 {
		st.clientBits = chosen.p.clientBits
	}
	if r.clientBits > 0 {
		st.clientBits = min(st.clientBits, r.clientBits)
	}
	if r.serverBits > 0 {
		st.serverBits = r.serverBits
	}
	return st
}

// deflate compresses a message as §7.2.1 says: DEFLATE blocks ended by a sync flush, whose
// last 4 bytes (0x00 0x00 0xff 0xff) are removed. With context takeover the compressor goes on
// from the last message; without, it starts anew. Below a 32 KiB window (which compress/flate
// cannot make) it makes no back-references at all, which suits any window.
func (p *pmdState) deflate(msg []byte) []byte {
	level := 4 // a level that searches back through the window, without lingering on it
	if p.clientBits < 15 {
		level = flate.HuffmanOnly
	}
	p.buf.Reset()
	if p.w == nil {
		p.w, _ = flate.NewWriter(&p.buf, level)
	} else if !p.clientTakeover {
		p.w.Reset(&p.buf)
	}
	p.w.Write(msg)
	p.w.Flush()
	out, ok := bytes.CutSuffix(p.buf.Bytes(), []byte{0, 0, 0xff, 0xff})
	if !ok {
		panic("a sync flush that does not end with 0x00 0x00 0xff 0xff")
	}
	return bytes.Clone(out)
}

// flushTail is what §7.2.2 has the receiver append to a compressed message, then a final empty
// stored block, so that the DEFLATE stream ends where the message does.
var flushTail = []byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

// inflate decompresses a message the server sent compressed, after the window of the ones
// before it when the server takes its context over. Its back-references must stay within the
// window agreed (2^server_max_window_bits bytes) and, without context takeover, within the
// message: that is checked with inflateChecked below 15 bits, or when p.check says so.
func (p *pmdState) inflate(c *rawClient, payload []byte) []byte {
	c.t.Helper()
	var dict []byte
	if p.serverTakeover {
		dict = p.window
	}
	out, err := io.ReadAll(flate.NewReaderDict(io.MultiReader(bytes.NewReader(payload), bytes.NewReader(flushTail)), dict))
	if err != nil {
		c.fatalf("the server's compressed message does not inflate: %v", err)
	}
	if p.check || p.serverBits < 15 {
		checked, dist, err := inflateChecked(dict, append(bytes.Clone(payload), flushTail[:4]...))
		switch {
		case err != nil:
			c.fatalf("the server's compressed message: %v", err)
		case !bytes.Equal(checked, out):
			c.fatalf("the server's compressed message inflates two ways")
		case dist > 1<<p.serverBits:
			c.fatalf("a back-reference of %d bytes, past the window of 2^%d agreed (RFC 7692 §7.1.2.1)", dist, p.serverBits)
		}
	}
	if p.serverTakeover {
		p.window = append(p.window, out...)
		p.window = p.window[max(0, len(p.window)-32768):]
	}
	return out
}

// sendMessage sends a data message compressed (when permessage-deflate was agreed) and cut
// into fragments of fragSize bytes (none when 0), in one write.
func (c *rawClient) sendMessage(op byte, msg []byte, fragSize int) {
	c.t.Helper()
	payload, rsv := msg, byte(0)
	if c.pmd != nil {
		payload, rsv = c.pmd.deflate(msg), rsv1
	}
	if fragSize <= 0 || len(payload) <= fragSize {
		c.send(wsFrame{fin: true, rsv: rsv, op: op, payload: payload})
		return
	}
	var frames []wsFrame
	for i := 0; i < len(payload); i += fragSize {
		f := wsFrame{op: opCont, payload: payload[i:min(i+fragSize, len(payload))], fin: i+fragSize >= len(payload)}
		if i == 0 {
			f.op, f.rsv = op, rsv // RSV1 on the first frame alone (RFC 7692 §6.1)
		}
		frames = append(frames, f)
	}
	c.send(frames...)
}
