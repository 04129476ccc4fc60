package websocket

import (
	"github.com/dwellhttp/dwell/internal/bufpool"
	"github.com/dwellhttp/dwell/websocket/internal/deflate"
)

// permessage-deflate (RFC 7692) on a connection: the negotiated compressor and decompressor,
// which without context takeover hold nothing between messages (their flate state is pooled
// for the length of one message) and with it keep their windows for the connection's life.
type flateState struct {
	comp   deflate.Compressor
	decomp deflate.Decompressor
	// shared: the connection compresses each message alone with a full window, as a
	// PreparedMessage's one compression does, so that its compressed frame serves it.
	shared bool
}

// statelessFlate are the flateStates of the connections without context takeover, which
// compression and decompression only read: [0] with a full window, [1] with a window limited
// below 15 bits (compressed with Huffman coding alone, see deflate.NewCompressor).
var statelessFlate = [2]flateState{
	{comp: deflate.NewCompressor(false, 15), decomp: deflate.NewDecompressor(false), shared: true},
	{comp: deflate.NewCompressor(false, 8), decomp: deflate.NewDecompressor(false)},
}

// errTooLarge is what inflate fails with past the message limit.
var errTooLarge = deflate.ErrTooLarge

func newFlateState(p deflate.Params) *flateState {
	if p.ServerNoContextTakeover && p.ClientNoContextTakeover {
		// Without context takeover either way a flateState is never written to: every such
		// connection shares one, and holds nothing of its own for compression.
		if p.ServerMaxWindowBits == 0 || p.ServerMaxWindowBits == 15 {
			return &statelessFlate[0]
		}
		return &statelessFlate[1]
	}
	return &flateState{
		comp:   deflate.NewCompressor(!p.ServerNoContextTakeover, p.ServerMaxWindowBits),
		decomp: deflate.NewDecompressor(!p.ClientNoContextTakeover),
		shared: p.ServerNoContextTakeover && (p.ServerMaxWindowBits == 0 || p.ServerMaxWindowBits == 15),
	}
}

// deflate returns the compressed payload of a message, in a message buffer.
func (f *flateState) deflate(msg []byte) []byte {
	return f.comp.Compress(bufpool.Get(len(msg)+len(msg)/64+64), msg)
}

// inflate returns the inflated message of a compressed payload, in a message buffer, or
// errTooLarge past limit bytes.
func (f *flateState) inflate(payload []byte, limit int64) ([]byte, error) {
	out := bufpool.Get(min(4*len(payload)+512, int(limit)+1))
	out, err := f.decomp.Decompress(out, payload, int(limit))
	if err != nil {
		bufpool.Put(out)
		return nil, err
	}
	return out, nil
}

// release gives back what context takeover keeps, once the connection is closed.
func (f *flateState) release() {
	if f != nil {
		f.comp.Release()
	}
}
