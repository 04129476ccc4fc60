package wire

import (
	"errors"
	"io"

	"github.com/dwellhttp/dwell/internal/syntax"
)

// A FramingError is a malformed chunked body: the request cannot be delimited, so the
// connection ends after the response. It is sticky: every later read returns it again.
type FramingError struct{ what string }

func (e *FramingError) Error() string { return "dwell: malformed chunked body: " + e.what }

// StatusCode reports the status the server answers with when the handler has not responded.
func (e *FramingError) StatusCode() int { return 400 }

// ChunkedDecoder decodes the chunked transfer coding (RFC 9112 §7.1) from input that arrives in
// pieces of any size. Chunk data is copied in runs; only the framing around it is read a byte
// at a time. Errors are sticky: once the framing is broken, nothing after it can be trusted.
type ChunkedDecoder struct {
	state     uint8
	sawDigit  bool
	size      uint64 // chunk-size being parsed, then data bytes left in the chunk
	lineLen   int    // bytes of the current size line or trailer section, bounded
	frameLen  int64  // framing bytes of the current chunk's size line
	chunkSize int64  // data bytes of the current chunk
	excess    int64  // framing beyond what the data so far allows (see endChunk)
	total     int64  // data bytes decoded so far
	max       int64  // limit on total (0: none)
	trailer   []byte // raw trailer field lines, each ending in CRLF, validated
	err       error
}

const (
	chSize          = iota // hex digits of chunk-size
	chSizeWS               // BWS between chunk-size and ";"
	chExtStart             // after ";": BWS, then an extension's name
	chExtName              // chunk-ext-name (a token)
	chExtNameWS            // BWS after the name: "=" or ";" must follow
	chExtValue             // after "=": BWS, then a token or a quoted-string
	chExtToken             // chunk-ext-val as a token
	chExtQuoted            // chunk-ext-val as a quoted-string
	chExtQuotedPair        // after a backslash in a quoted-string
	chExtQuoteEnd          // after a quoted-string's closing quote
	chExtValueWS           // BWS after a value: ";" must follow
	chSizeLF               // LF ending the size line
	chData                 // chunk data
	chDataCR               // CR after chunk data
	chDataLF               // LF after chunk data
	chTrailer              // start of a trailer line, or the final CRLF
	chTrailerLn            // inside a trailer field line
	chEndLF                // LF of the final CRLF
	chDone
)

// Limits on framing bytes: a chunk-size line with its extensions, the trailer section, and
// framing beyond what the data carries. They keep a client from making the server hold or scan
// unbounded framing: without the last, a body of one-byte chunks each with 4 KiB of
// extensions would cost the server 4 KiB of reading per byte of body.
const (
	maxChunkLine   = 4096
	MaxTrailerSize = 16 << 10
	maxExcess      = 16 << 10
	freePerChunk   = 16 // framing bytes every chunk may have whatever its size
)

// ErrTooLarge is returned by Decode when the body passes the decoder's limit (Reset, Limit).
var ErrTooLarge = errors.New("dwell: request body too large")

var (
	ErrChunkSize     = &FramingError{"invalid chunk size"}
	ErrChunkOverflow = &FramingError{"chunk size too large"}
	ErrChunkExt      = &FramingError{"invalid chunk extension"}
	ErrChunkLine     = &FramingError{"chunk size line too long"}
	ErrChunkCRLF     = &FramingError{"missing CRLF after chunk data"}
	ErrChunkLF       = &FramingError{"line not ended by CRLF"}
	ErrTrailer       = &FramingError{"invalid trailer field"}
	ErrTrailerSize   = &FramingError{"trailer section too large"}
	ErrChunkExcess   = &FramingError{"too much chunk framing for the data it carries"}
)

// Decode consumes framing and data from src and copies body bytes into dst (a nil dst discards
// them, up to len(src)). It returns the body bytes produced and the src bytes consumed; err is
// io.EOF once the last chunk and the trailer section have been read.
func (d *ChunkedDecoder) Decode(dst, src []byte) (nd, ns int, err error) {
	if d.err != nil {
		return 0, 0, d.err
	}
	discard := dst == nil
	for ns < len(src) {
		if d.state == chData {
			n := min(int(min(d.size, uint64(len(src)-ns))), len(src)-ns)
			if !discard {
				n = min(n, len(dst)-nd)
				copy(dst[nd:], src[ns:ns+n])
			}
			nd += n
			ns += n
			d.size -= uint64(n)
			if d.size == 0 {
				d.state = chDataCR
			}
			if !discard && nd == len(dst) {
				return nd, ns, nil
			}
			continue
		}
		if d.state == chDone {
			return nd, ns, io.EOF
		}
		if err := d.framing(src[ns]); err != nil {
			d.err = err
			return nd, ns, err
		}
		ns++
	}
	if d.state == chDone {
		return nd, ns, io.EOF
	}
	return nd, ns, nil
}

// framing advances the decoder over one byte outside chunk data.
func (d *ChunkedDecoder) framing(c byte) error {
	switch d.state {
	case chSize:
		if v := unhex(c); v >= 0 {
			if d.size>>59 != 0 {
				return ErrChunkOverflow
			}
			d.size = d.size<<4 | uint64(v)
			d.sawDigit = true
			return d.countLine()
		}
		if !d.sawDigit {
			return ErrChunkSize
		}
		switch c {
		case '\r':
			d.state = chSizeLF
		case ';':
			d.state = chExtStart
		case ' ', '\t':
			d.state = chSizeWS
		default:
			return ErrChunkSize
		}
		return d.countLine()
	case chSizeLF:
		if c != '\n' {
			return ErrChunkLF
		}
		return d.startData()
	case chDataCR:
		if c != '\r' {
			return ErrChunkCRLF
		}
		d.state = chDataLF
	case chDataLF:
		if c != '\n' {
			return ErrChunkCRLF
		}
		d.state = chSize
		return d.endChunk()
	case chTrailer:
		if c == '\r' {
			d.state = chEndLF
			return nil
		}
		d.state = chTrailerLn
		return d.trailerByte(c)
	case chTrailerLn:
		return d.trailerByte(c)
	case chEndLF:
		if c != '\n' {
			return ErrChunkLF
		}
		d.state = chDone
	default: // the extensions of a size line
		if err := d.extension(c); err != nil {
			return err
		}
		return d.countLine()
	}
	return nil
}

// extension advances over one byte of the size line after the chunk-size (RFC 9112 §7.1.1):
//
//	chunk-ext      = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
//	chunk-ext-name = token
//	chunk-ext-val  = token / quoted-string
//
// Extensions are ignored, but only once they parse: a recipient that skipped to the CR could
// disagree with another about where the line ends.
func (d *ChunkedDecoder) extension(c byte) error {
	ws := c == ' ' || c == '\t'
	switch d.state {
	case chSizeWS:
		switch {
		case ws:
		case c == ';':
			d.state = chExtStart
		default:
			return ErrChunkSize // the size is followed by whitespace and no extension
		}
	case chExtValueWS, chExtQuoteEnd:
		switch {
		case ws:
			d.state = chExtValueWS
		case c == ';':
			d.state = chExtStart
		case c == '\r' && d.state == chExtQuoteEnd:
			d.state = chSizeLF
		default:
			return ErrChunkExt
		}
	case chExtStart:
		switch {
		case ws:
		case syntax.IsTchar[c]:
			d.state = chExtName
		default:
			return ErrChunkExt // an empty name, say
		}
	case chExtName, chExtNameWS:
		switch {
		case syntax.IsTchar[c] && d.state == chExtName:
		case ws:
			d.state = chExtNameWS
		case c == '=':
			d.state = chExtValue
		case c == ';':
			d.state = chExtStart
		case c == '\r' && d.state == chExtName:
			d.state = chSizeLF
		default:
			return ErrChunkExt
		}
	case chExtValue:
		switch {
		case ws:
		case c == '"':
			d.state = chExtQuoted
		case syntax.IsTchar[c]:
			d.state = chExtToken
		default:
			return ErrChunkExt
		}
	case chExtToken:
		switch {
		case syntax.IsTchar[c]:
		case ws:
			d.state = chExtValueWS
		case c == ';':
			d.state = chExtStart
		case c == '\r':
			d.state = chSizeLF
		default:
			return ErrChunkExt
		}
	case chExtQuoted:
		switch {
		case c == '"':
			d.state = chExtQuoteEnd
		case c == '\\':
			d.state = chExtQuotedPair
		case c == '\t' || c >= ' ' && c != 0x7f:
		default:
			return ErrChunkExt
		}
	case chExtQuotedPair:
		if c != '\t' && (c < ' ' || c == 0x7f) {
			return ErrChunkExt
		}
		d.state = chExtQuoted
	}
	return nil
}

// startData ends a size line: the chunk's data follows, or, for the last chunk, the trailers.
func (d *ChunkedDecoder) startData() error {
	d.frameLen = int64(d.lineLen) + 2
	d.lineLen = 0
	d.sawDigit = false
	if d.size == 0 {
		d.state = chTrailer
		return nil
	}
	if d.max > 0 && d.total+int64(d.size) > d.max {
		return ErrTooLarge
	}
	d.total += int64(d.size)
	d.chunkSize = int64(d.size)
	d.state = chData
	return nil
}

// endChunk accounts for a chunk's framing once its data CRLF is read. Framing beyond
// freePerChunk bytes is excess, which the chunk's data pays off byte for byte but cannot bank
// for later chunks; excess past maxExcess fails the body.
func (d *ChunkedDecoder) endChunk() error {
	d.excess = max(0, d.excess+d.frameLen+2-freePerChunk-d.chunkSize)
	if d.excess > maxExcess {
		return ErrChunkExcess
	}
	return nil
}

// Limit lowers the decoder's limit to n, and reports whether the data announced so far is
// already over it.
func (d *ChunkedDecoder) Limit(n int64) bool {
	if d.max == 0 || n < d.max {
		d.max = n
	}
	return d.total > d.max
}

func (d *ChunkedDecoder) countLine() error {
	d.lineLen++
	if d.lineLen > maxChunkLine {
		return ErrChunkLine
	}
	return nil
}

// trailerByte collects a trailer field line (RFC 9112 §7.1.2) and validates it like a header
// field once its LF arrives.
func (d *ChunkedDecoder) trailerByte(c byte) error {
	if len(d.trailer) >= MaxTrailerSize {
		return ErrTrailerSize
	}
	d.trailer = append(d.trailer, c)
	if c != '\n' {
		return nil
	}
	line := d.trailer[lastLineStart(d.trailer):]
	if _, _, rej := parseField(line, 0); rej != nil {
		return ErrTrailer
	}
	d.state = chTrailer
	return nil
}

// lastLineStart returns where the last line of b (which ends in LF) begins.
func lastLineStart(b []byte) int {
	for i := len(b) - 2; i >= 0; i-- {
		if b[i] == '\n' {
			return i + 1
		}
	}
	return 0
}

func (d *ChunkedDecoder) Reset(max int64) {
	t := d.trailer[:0]
	*d = ChunkedDecoder{max: max, trailer: t}
}

// Trailers calls f for each trailer field collected, in order.
func (d *ChunkedDecoder) Trailers(f func(name, value []byte) bool) {
	b := d.trailer
	for i := 0; i < len(b); {
		fl, next, rej := parseField(b, i)
		if rej != nil {
			return
		}
		if !f(b[fl.Name.off:fl.Name.off+fl.Name.n], b[fl.Value.off:fl.Value.off+fl.Value.n]) {
			return
		}
		i = next
	}
}

// AppendChunkSize appends a chunk-size line (RFC 9112 §7.1) for n bytes.
func AppendChunkSize(b []byte, n int64) []byte {
	const hexDigits = "0123456789abcdef"
	var tmp [16]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = hexDigits[n&15]
		n >>= 4
		if n == 0 {
			break
		}
	}
	b = append(b, tmp[i:]...)
	return append(b, '\r', '\n')
}

// DataLeft returns how many data bytes of the current chunk are still to come: 0 between
// chunks. A reader that reads no more than that, and a little for the framing after it, reads
// little past the body's end.
func (d *ChunkedDecoder) DataLeft() int64 {
	if d.state == chData {
		return int64(d.size)
	}
	return 0
}

// TrailerCap returns the capacity of the buffer the decoder keeps trailers in, so that a pool of
// decoders can drop one that a large trailer section grew.
func (d *ChunkedDecoder) TrailerCap() int { return cap(d.trailer) }
