package interop

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
)

// Autobahn's cases 12 and 13, permessage-deflate (RFC 7692): compressed messages of many sizes
// and kinds, whole and fragmented, under offers of every parameter; the client compresses
// each, the server's echo is compressed (the servers here compress every message of 128 bytes
// or more) and inflated within the window and context the response agreed, which
// inflateChecked sees. Beside them, the suite's own: offers the server must decline and the
// acceptable ones after them, the RFC's own examples of compressed payloads, and what fails a
// compressed connection.

// A compressionGroup is a group of cases under one offer.
type compressionGroup struct {
	offer string // Sec-WebSocket-Extensions
	cases []confCase
}

// corpus returns a deterministic stream of 2 MiB of payload bytes of one kind (1 to 5), for the
// messages of a group to be cut from one after another, so that each message differs and
// context takeover has a history to refer to. The text kinds are ASCII, cut anywhere.
func corpus(kind int) []byte { return corpora[kind-1]() }

var corpora = func() (fs [5]func() []byte) {
	for i := range fs {
		fs[i] = sync.OnceValue(func() []byte { return makeCorpus(i + 1) })
	}
	return fs
}()

func makeCorpus(kind int) []byte {
	r := rand.New(rand.NewPCG(uint64(kind), 7692))
	b := make([]byte, 0, 2<<20+64)
	words := strings.Fields("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua")
	for i := 0; len(b) < 2<<20; i++ {
		switch kind {
		case 1: // text: words at random
			b = append(b, words[r.IntN(len(words))]...)
			b = append(b, ' ')
		case 2: // binary that does not compress
			b = binary.LittleEndian.AppendUint64(b, r.Uint64())
		case 3: // text that compresses well: numbered lines of a verse
			b = fmt.Appendf(b, "%d: To be, or not to be, that is the question:\n", i)
		case 4: // binary records of slowly changing fields
			b = append(b, byte(i), byte(i>>8), 0, 0, byte(i%7), 0xff, byte(r.IntN(4)), 0)
		default: // bases at random: Huffman coding alone compresses it
			b = append(b, "ACGT"[r.IntN(4)])
		}
	}
	return b[:2<<20]
}

// compressionSizes are each group's messages, by size and fragment size (0: whole), as
// Autobahn's groups have them.
var compressionSizes = []struct{ size, frag int }{
	{16, 0}, {64, 0}, {256, 0}, {1024, 0}, {4096, 0}, {8192, 0}, {16384, 0}, {32768, 0}, {65536, 0}, {131072, 0},
	{8192, 256}, {16384, 256}, {32768, 256}, {65536, 256}, {131072, 256}, {131072, 1024}, {131072, 4096}, {131072, 32768},
}

// compressedEchoes is a case of count messages of size bytes from the kind's corpus, each
// compressed, fragmented into frag-byte frames, and echoed.
func compressedEchoes(id string, kind, size, frag, count int) confCase {
	op := opBinary
	if kind == 1 || kind == 3 {
		op = opText
	}
	return confCase{id: id, what: fmt.Sprintf("%d compressed messages of %d bytes of kind %d, in fragments of %d", count, size, kind, frag),
		run: func(c *rawClient) {
			if c.pmd == nil {
				c.fatalf("permessage-deflate was not agreed")
			}
			c.pmd.check = true
			src := corpus(kind)
			for i := range count {
				msg := src[(i*size)%(len(src)-size):][:size]
				c.sendMessage(op, msg, frag)
				ev := c.next()
				if ev.op != op || !bytes.Equal(ev.data, msg) {
					c.fatalf("message %d: got opcode %#x %.60q (%d bytes), want opcode %#x %.60q (%d bytes)", i, ev.op, ev.data, len(ev.data), op, msg, len(msg))
				}
				if len(msg) >= 128 && !ev.compressed {
					c.fatalf("message %d of %d bytes echoed uncompressed", i, len(msg))
				}
			}
			c.closeNormally()
		}}
}

// count is how many messages a case of size bytes sends: Autobahn sends 1000; fewer here, so
// that the suite takes a minute rather than an hour (and fewer still under the race detector,
// which slows compression tenfold), but always more than one, so that windows carry over.
func count(size int) int {
	if raceEnabled {
		return min(10, max(2, (128<<10)/size))
	}
	return min(50, max(4, (1<<20)/size))
}

// compressionCases are the groups of cases 12 and 13, and the suite's own groups of offers.
func compressionCases() []compressionGroup {
	var groups []compressionGroup
	sized := func(prefix string, kind int) []confCase {
		var cases []confCase
		for i, s := range compressionSizes {
			cases = append(cases, compressedEchoes(fmt.Sprintf("%s.%d", prefix, i+1), kind, s.size, s.frag, count(s.size)))
		}
		return cases
	}
	// 12.1 to 12.5: Autobahn's default offer, five kinds of payload (Autobahn's are five files,
	// text and binary, of which these kinds stand in).
	const offer = "permessage-deflate; client_no_context_takeover; client_max_window_bits"
	for kind := 1; kind <= 5; kind++ {
		groups = append(groups, compressionGroup{offer, sized(fmt.Sprintf("12.%d", kind), kind)})
	}
	// 13.1 to 13.7: Autobahn's offers of server_no_context_takeover and server_max_window_bits,
	// added to the default, the last three offers in one list.
	for i, params := range []string{"", "; server_no_context_takeover", "; server_max_window_bits=8", "; server_max_window_bits=15",
		"; server_no_context_takeover; server_max_window_bits=8", "; server_no_context_takeover; server_max_window_bits=15",
		"; server_no_context_takeover; server_max_window_bits=8, " + offer + "; server_no_context_takeover, " + offer,
	} {
		groups = append(groups, compressionGroup{offer + params, sized(fmt.Sprintf("13.%d", i+1), 1)})
	}
	// Autobahn's offers all have client_no_context_takeover: the same sizes again without it,
	// so that the server's inflater carries its window over too, where it may.
	for _, kind := range []int{1, 4} {
		groups = append(groups, compressionGroup{"permessage-deflate; client_max_window_bits", sized(fmt.Sprintf("pmd/client takeover/%d", kind), kind)})
	}
	// The suite's own: every window size each way, both context parameters, offers that must
	// be declined before an acceptable one, a value quoted (§9.1), another extension first,
	// and offers none of which is acceptable, where the messages go uncompressed.
	few := func(id string) []confCase {
		return []confCase{compressedEchoes(id+"/1", 1, 16, 0, 4), compressedEchoes(id+"/2", 3, 4096, 0, 8),
			compressedEchoes(id+"/3", 1, 32768, 1000, 3)}
	}
	for bits := 8; bits <= 15; bits++ {
		groups = append(groups,
			compressionGroup{fmt.Sprintf("permessage-deflate; server_max_window_bits=%d", bits), few(fmt.Sprintf("pmd/server_max_window_bits=%d", bits))},
			compressionGroup{fmt.Sprintf("permessage-deflate; client_max_window_bits=%d", bits), few(fmt.Sprintf("pmd/client_max_window_bits=%d", bits))})
	}
	for _, g := range [][2]string{
		{"pmd/both no_context_takeover", "permessage-deflate; client_no_context_takeover; server_no_context_takeover"},
		{"pmd/all", "permessage-deflate; client_no_context_takeover; server_no_context_takeover; client_max_window_bits=9; server_max_window_bits=10"},
		{"pmd/decline unknown", "permessage-deflate; foo, permessage-deflate; client_max_window_bits"},
		{"pmd/decline bits 7", "permessage-deflate; server_max_window_bits=7, permessage-deflate"},
		{"pmd/decline bits 16", "permessage-deflate; client_max_window_bits=16, permessage-deflate; server_no_context_takeover"},
		{"pmd/decline no value", "permessage-deflate; server_max_window_bits, permessage-deflate; client_no_context_takeover"},
		{"pmd/decline leading zero", "permessage-deflate; server_max_window_bits=09, permessage-deflate"},
		{"pmd/decline twice", "permessage-deflate; server_no_context_takeover; server_no_context_takeover, permessage-deflate"},
		{"pmd/decline value on flag", "permessage-deflate; client_no_context_takeover=1, permessage-deflate"},
		{"pmd/quoted", `permessage-deflate; server_max_window_bits="10"`},
		{"pmd/other extension first", "x-webkit-deflate-frame, permessage-deflate; client_max_window_bits"},
	} {
		groups = append(groups, compressionGroup{g[1], few(g[0])})
	}
	for _, g := range [][2]string{
		{"pmd/none acceptable", "permessage-deflate; foo=1, permessage-deflate; server_max_window_bits=16"},
		{"pmd/other extension", "x-webkit-deflate-frame"},
	} {
		name, offer := g[0], g[1]
		groups = append(groups, compressionGroup{offer, []confCase{{id: name, what: "no offer acceptable: messages go uncompressed", run: func(c *rawClient) {
			if c.pmd != nil {
				c.fatalf("permessage-deflate agreed on %q", offer)
			}
			c.send(text("Hello"))
			c.expectMessage(opText, []byte("Hello"))
			c.closeNormally()
		}}}})
	}
	return groups
}

// deflateFailureCases are the suite's own cases on a connection that agreed permessage-deflate:
// the payloads RFC 7692 §7.2.3 gives as examples, inflated as it says; RSV1 where it may not
// be (§6.1: the first frame of a data message only), and compressed data that does not inflate
// or inflates to text that is not UTF-8, which fail the connection.
func deflateFailureCases() []confCase {
	hello := func(payloads ...[]byte) func(c *rawClient) {
		return func(c *rawClient) {
			for _, p := range payloads {
				c.send(wsFrame{fin: true, rsv: rsv1, op: opText, payload: p})
				c.expectMessage(opText, []byte("Hello"))
			}
			c.closeNormally()
		}
	}
	rfcHello := []byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}
	var final bytes.Buffer
	w, _ := flate.NewWriter(&final, flate.BestCompression)
	w.Write([]byte("Hello"))
	w.Close() // a block with BFINAL set ends the message, as §7.2.3.3 allows
	z := func(c *rawClient, s string) []byte { return c.pmd.deflate([]byte(s)) }
	return []confCase{
		{id: "pmd/7.2.3.1", what: "RFC 7692's \"Hello\" compressed", run: hello(rfcHello)},
		{id: "pmd/7.2.3.2", what: "RFC 7692's \"Hello\" twice, the second referring to the first", run: func(c *rawClient) {
			if !c.pmd.clientTakeover {
				hello(rfcHello, rfcHello)(c) // the server said client_no_context_takeover: no reference back
				return
			}
			hello(rfcHello, []byte{0xf2, 0x00, 0x11, 0x00, 0x00})(c)
		}},
		{id: "pmd/7.2.3.3", what: "\"Hello\" compressed into a block with BFINAL set", run: hello(final.Bytes())},
		{id: "pmd/7.2.3.4", what: "RFC 7692's \"Hello\" in a stored block", run: hello([]byte{0x00, 0x05, 0x00, 0xfa, 0xff, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x00})},
		{id: "pmd/7.2.3.5", what: "RFC 7692's \"Hello\" in two blocks", run: hello([]byte{0xf2, 0x48, 0x05, 0x00, 0x00, 0x00, 0xff, 0xff, 0xca, 0xc9, 0xc9, 0x07, 0x00})},
		{id: "pmd/7.2.3.6", what: "an empty message compressed: the one byte 0x00", run: func(c *rawClient) {
			c.send(wsFrame{fin: true, rsv: rsv1, op: opBinary, payload: []byte{0x00}})
			c.expectMessage(opBinary, nil)
			c.closeNormally()
		}},
		{id: "pmd/uncompressed", what: "a message with RSV1 clear is taken as it is (§6)", run: func(c *rawClient) {
			c.send(text(strings.Repeat("not compressed ", 20)))
			c.expectMessage(opText, []byte(strings.Repeat("not compressed ", 20)))
			c.closeNormally()
		}},
		{id: "pmd/fragmented", what: "a compressed message in 3 fragments, a ping between them", run: func(c *rawClient) {
			msg := corpus(3)[:20000]
			p := c.pmd.deflate(msg)
			third := len(p) / 3
			c.send(wsFrame{rsv: rsv1, op: opText, payload: p[:third]}, ping("between"),
				wsFrame{op: opCont, payload: p[third : 2*third]}, wsFrame{fin: true, op: opCont, payload: p[2*third:]})
			c.expectPong("between")
			c.expectMessage(opText, msg)
			c.closeNormally()
		}},
		{id: "pmd/rsv1 on a continuation", what: "RSV1 on a message's second frame", run: func(c *rawClient) {
			p := z(c, "Hello, Hello, Hello")
			c.failsWith(1002, wsFrame{rsv: rsv1, op: opText, payload: p[:2]}, wsFrame{fin: true, rsv: rsv1, op: opCont, payload: p[2:]})
		}},
		{id: "pmd/rsv1 on a ping", what: "RSV1 on a control frame", run: func(c *rawClient) {
			c.failsWith(1002, wsFrame{fin: true, rsv: rsv1, op: opPing, payload: z(c, "ping")})
		}},
		{id: "pmd/rsv1 on a close", what: "RSV1 on a close frame", run: func(c *rawClient) {
			c.failsWith(1002, wsFrame{fin: true, rsv: rsv1, op: opClose, payload: []byte{0x03, 0xe8}})
		}},
		{id: "pmd/not deflate", what: "RSV1 on a payload that does not inflate (3.4 with compression agreed)", run: func(c *rawClient) {
			// RFC 7692 §8 has such a message fail the connection, and gives no code: 1007 (data
			// not consistent with the message) and 1002 both say it.
			c.send(wsFrame{fin: true, rsv: rsv1, op: opText, payload: []byte("Hello")})
			c.expectClose(1007, 1002)
		}},
		{id: "pmd/not utf-8", what: "compressed text that inflates to invalid UTF-8", run: func(c *rawClient) {
			c.failsWith(1007, wsFrame{fin: true, rsv: rsv1, op: opText, payload: z(c, kosme+"\xed\xa0\x80edited")})
		}},
	}
}

// compressedLimitCases are the suite's own cases of the limit on a compressed connection: the
// limit is on the message inflated.
func compressedLimitCases(limit int) []confCase {
	return []confCase{
		{id: "limit/compressed/1", what: "a compressed message that inflates to the limit", run: func(c *rawClient) {
			msg := bigPayload(opText, limit)
			c.sendMessage(opText, msg, 0)
			c.expectMessage(opText, msg)
			c.closeNormally()
		}},
		{id: "limit/compressed/2", what: "a compressed message that inflates to a byte over the limit", run: func(c *rawClient) {
			c.sendMessage(opText, bigPayload(opText, limit+1), 0)
			c.expectClose(1009)
		}},
		{id: "limit/compressed/3", what: "16 MiB of zeros in a few KiB", run: func(c *rawClient) {
			c.sendMessage(opBinary, make([]byte, 16<<20), 0)
			c.expectClose(1009)
		}},
	}
}
