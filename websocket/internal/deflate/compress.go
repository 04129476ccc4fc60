package deflate

import (
	"compress/flate"
	"sync"
)

// Compressor compresses the messages a connection sends (RFC 7692 §7.2.1). Its zero value
// compresses each message with an empty window and flate.BestSpeed, holding nothing between
// messages. It is not safe for concurrent use: a connection's messages are compressed in order.
type Compressor struct {
	takeover bool    // keep w, and its window, from one message to the next
	huffman  bool    // compress with flate.HuffmanOnly: the window was limited below 15 bits
	w        *writer // with takeover, the writer kept between messages
}

// writer is a flate.Writer with the buffer it writes into, pooled together.
type writer struct {
	fw  *flate.Writer
	out appendWriter
}

// appendWriter is the io.Writer under a flate.Writer: it appends to the caller's slice.
type appendWriter struct{ b []byte }

func (a *appendWriter) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// writerPools hold idle writers, one pool per compression level: [0] flate.BestSpeed, [1]
// flate.HuffmanOnly.
var writerPools [2]sync.Pool

// NewCompressor returns a Compressor for the agreed parameters: takeover is the absence of
// server_no_context_takeover, maxWindowBits the agreed server_max_window_bits (0 means 15). It
// is a value, for the caller to embed in what it keeps for the connection with no allocation of
// its own; a Compressor must not be copied once it has compressed, as it may then hold a writer.
//
// With takeover, each message may refer back to the ones before it, and the Compressor keeps a
// flate.Writer between messages: about 1.2 MB with Go 1.26's compress/flate, for as long as
// the connection lives (Release returns it). The gain is for runs of alike messages of some
// size: flate.BestSpeed refers back into the previous message only (its last block, up to 64
// KiB), and forgets its history after a message under 128 bytes. Without takeover, a writer is
// taken from a pool for the length of one Compress call.
//
// Below 15 bits (a window under 32 KiB, which compress/flate cannot make), messages are
// compressed with flate.HuffmanOnly: Huffman coding with no back-references, which a peer
// reads whatever its window. Such output has nothing to take over, so takeover is then
// ignored and the Compressor holds nothing.
func NewCompressor(takeover bool, maxWindowBits int) Compressor {
	huffman := maxWindowBits != 0 && maxWindowBits < 15
	return Compressor{takeover: takeover && !huffman, huffman: huffman}
}

// Compress appends the compressed payload of msg, a whole message, to dst and returns the
// extended slice (§7.2.1): the DEFLATE blocks of msg ended by a sync flush, whose empty stored
// block's last 4 bytes, 0x00 0x00 0xff 0xff, are removed. An empty message compresses to the
// single byte 0x00 (§7.2.3.6).
func (c *Compressor) Compress(dst, msg []byte) []byte {
	w := c.w
	if w == nil {
		w = c.getWriter()
	}
	w.out.b = dst
	// Writes into an appendWriter cannot fail, and a flate.Writer has no other errors.
	_, _ = w.fw.Write(msg)
	_ = w.fw.Flush()
	out := w.out.b
	w.out.b = nil // the pool must not keep the caller's buffer
	if c.takeover {
		c.w = w
	} else {
		c.putWriter(w)
	}
	// Flush ends with an empty stored block: its header bits, then LEN 0x0000, NLEN 0xffff.
	return out[:len(out)-4]
}

// Release returns the writer that context takeover keeps to the pool, for a connection that
// is done sending. A later message starts with an empty window, as the first one did; a
// Compressor without takeover holds nothing and Release does nothing.
func (c *Compressor) Release() {
	if c.w != nil {
		c.putWriter(c.w)
		c.w = nil
	}
}

func (c *Compressor) pool() *sync.Pool {
	if c.huffman {
		return &writerPools[1]
	}
	return &writerPools[0]
}

func (c *Compressor) getWriter() *writer {
	if w, ok := c.pool().Get().(*writer); ok {
		return w
	}
	level := flate.BestSpeed
	if c.huffman {
		level = flate.HuffmanOnly
	}
	w := new(writer)
	w.fw, _ = flate.NewWriter(&w.out, level) // the error is for a level out of range
	return w
}

// putWriter resets w, so that the next message through it starts with an empty window, and
// pools it.
func (c *Compressor) putWriter(w *writer) {
	w.fw.Reset(&w.out)
	c.pool().Put(w)
}
