package deflate

import (
	"compress/flate"
	"io"
	"sync"
)

// Decompressor inflates the compressed messages a connection receives (RFC 7692 §7.2.2). Its
// zero value inflates each message alone (the client agreed to client_no_context_takeover),
// holding nothing between messages. It is not safe for concurrent use.
type Decompressor struct {
	takeover bool
	dict     []byte // with takeover, the last 32 KiB (or less) of what was inflated
}

// windowSize is DEFLATE's largest window, 2^15 bytes (RFC 1951 §3.2.5: distances go to 32768):
// no back-reference reaches further, whatever client_max_window_bits was.
const windowSize = 1 << 15

// NewDecompressor returns a Decompressor; takeover is the absence of client_no_context_takeover
// in the agreed parameters. With takeover, a message may refer back to the messages before it,
// and the Decompressor keeps the last 32 KiB of their inflated bytes between messages, the
// dictionary of the next one: 32 KiB a connection, for as long as it lives. Without takeover it
// keeps nothing. It is a value, for the caller to embed with no allocation of its own; it must
// not be copied once it has inflated a message, as it may then hold the dictionary.
func NewDecompressor(takeover bool) Decompressor { return Decompressor{takeover: takeover} }

// reader is a pooled flate reader with the source it reads a message from.
type reader struct {
	fr    io.ReadCloser // from flate.NewReader: also a flate.Resetter
	src   source
	probe [1]byte // where inflate reads the byte past a message's limit
}

var readerPool sync.Pool

// tail follows a message's payload into the inflater: the 4 bytes §7.2.2 appends, which end
// the empty stored block the payload ends in, then an empty final stored block (BFINAL=1) that
// ends the stream, so that the inflater returns io.EOF at the message's end rather than
// io.ErrUnexpectedEOF, which it also returns for a payload cut short. A payload that ends with
// a final block of its own (§7.2.3.4) ends there, and tail goes unread.
const tail = "\x00\x00\xff\xff" + "\x01\x00\x00\xff\xff"

// source reads a message's payload, then tail. It is an io.ByteReader, so that the inflater
// reads from it directly, with no bufio.Reader of its own.
//
// It also checks that tail is read as the stored blocks it is, and not as the rest of a block
// the payload left unfinished: compress/flate reads a stored block's LEN and NLEN, and its data,
// with Read, and everything else (block headers, Huffman codes) a byte at a time with ReadByte.
// A well-formed payload leaves tail's first 4 bytes to one Read (the LEN and NLEN of its last,
// empty, stored block), tail's fifth byte to ReadByte (the final block's header) and the last 4
// to one Read. Anything else — a Huffman code or a stored block's length that runs from the
// payload into tail — sets bad: the inflater, decoding tail as data, may well have reached an
// end of stream, with garbage on the way.
type source struct {
	msg []byte
	pos int  // into tail, once msg is read
	bad bool // tail was read as something other than its two stored blocks
}

func (s *source) ReadByte() (byte, error) {
	if len(s.msg) > 0 {
		c := s.msg[0]
		s.msg = s.msg[1:]
		return c, nil
	}
	if s.pos < len(tail) {
		s.bad = s.bad || s.pos != 4 // only the final block's header is read a byte at a time
		s.pos++
		return tail[s.pos-1], nil
	}
	return 0, io.EOF
}

func (s *source) Read(p []byte) (int, error) {
	n := copy(p, s.msg)
	s.msg = s.msg[n:]
	if n == len(p) {
		return n, nil
	}
	if s.pos == len(tail) {
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
	// From tail: whole, and only the LEN and NLEN of one of its stored blocks.
	s.bad = s.bad || n > 0 || len(p) != 4 || s.pos != 0 && s.pos != 5
	m := copy(p[n:], tail[s.pos:])
	s.pos += m
	return n + m, nil
}

// Decompress appends the inflated payload of msg, a whole compressed message, to dst and
// returns the extended slice (§7.2.2: the payload with 0x00 0x00 0xff 0xff appended, inflated).
//
// It fails with ErrTooLarge as soon as the message inflates to more than limit bytes (a
// negative limit counts as 0), having written no more than limit bytes into dst: a payload of a
// few kilobytes can inflate to gigabytes, and is refused after the limit's worth of work and
// memory (compress/flate decodes no further ahead of what it has returned than its 32 KiB
// window). It fails with ErrCorrupt when msg is not DEFLATE data. On an error the slice
// returned has dst's length (its bytes past that are garbage), and with takeover the
// connection's window is lost: the caller fails the connection.
//
// An empty payload is taken for an empty message, though §7.2.2's procedure finds it corrupt
// (the empty message is 0x00, §7.2.3.6): zlib's inflate, which many implementations use, waits
// at the incomplete block header for input that never comes and reports no error, so a sender
// of empty payloads sees them read as empty messages elsewhere. Bytes after a final block
// (BFINAL=1) are ignored, as compress/flate ignores them.
//
// The flate reader is pooled for the length of the call; with context takeover the last 32 KiB
// of output are kept for the next message.
func (d *Decompressor) Decompress(dst, msg []byte, limit int) ([]byte, error) {
	if len(msg) == 0 {
		return dst, nil
	}
	limit = max(limit, 0)
	r, _ := readerPool.Get().(*reader)
	if r == nil {
		r = new(reader)
		r.fr = flate.NewReader(&r.src)
	}
	r.src = source{msg: msg}
	var dict []byte
	if d.takeover {
		dict = d.dict
	}
	_ = r.fr.(flate.Resetter).Reset(&r.src, dict) // a flate reader's Reset cannot fail
	start := len(dst)
	dst, err := r.inflate(dst, limit)
	if err == nil && r.src.bad {
		err = ErrCorrupt // the payload did not end on a block boundary
	}
	r.src = source{} // the pool must not keep the caller's message
	readerPool.Put(r)
	if err != nil {
		return dst[:start], err
	}
	if d.takeover {
		d.remember(dst[start:])
	}
	return dst, nil
}

// inflate reads r.fr to its end into dst, writing no more than limit bytes there: one byte
// more, read into r.probe, says that the message is over the limit.
func (r *reader) inflate(dst []byte, limit int) ([]byte, error) {
	start := len(dst)
	for {
		room := limit - (len(dst) - start) // bytes the message may still inflate to
		if room == 0 {
			n, err := r.fr.Read(r.probe[:])
			switch {
			case n > 0:
				return dst, ErrTooLarge
			case err == io.EOF:
				return dst, nil
			case err != nil:
				return dst, ErrCorrupt
			}
			continue
		}
		if len(dst) == cap(dst) {
			dst = grow(dst, room)
		}
		buf := dst[len(dst):cap(dst)]
		if len(buf) > room {
			buf = buf[:room]
		}
		n, err := r.fr.Read(buf)
		dst = dst[:len(dst)+n]
		switch {
		case err == io.EOF:
			return dst, nil
		case err != nil:
			return dst, ErrCorrupt // flate.CorruptInputError, or io.ErrUnexpectedEOF
		}
	}
}

// grow returns dst with room for more: as much again as its capacity, at least 512 bytes, and
// at most room; all of room once doubling again would pass it, so that the buffer is not
// copied once more for the last few bytes.
func grow(dst []byte, room int) []byte {
	n := max(cap(dst), 512)
	if n > room-n {
		n = room
	}
	nb := make([]byte, len(dst), len(dst)+n)
	copy(nb, dst)
	return nb
}

// remember keeps the last windowSize bytes of everything inflated so far, out being the latest.
func (d *Decompressor) remember(out []byte) {
	if d.dict == nil {
		d.dict = make([]byte, 0, windowSize)
	}
	if len(out) >= windowSize {
		d.dict = append(d.dict[:0], out[len(out)-windowSize:]...)
		return
	}
	if keep := windowSize - len(out); len(d.dict) > keep {
		n := copy(d.dict, d.dict[len(d.dict)-keep:])
		d.dict = d.dict[:n]
	}
	d.dict = append(d.dict, out...)
}
