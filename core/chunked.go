package core

import "io"

// chunkedDecoder decodes the chunked transfer coding (RFC 9112 §7.1) from input that arrives in
// pieces of any size. Chunk data is copied in runs; only the framing around it is read a byte
// at a time. Errors are sticky: once the framing is broken, nothing after it can be trusted.
type chunkedDecoder struct {
	state    uint8
	sawDigit bool
	size     uint64 // chunk-size being parsed, then data bytes left in the chunk
	lineLen  int    // bytes of the current size line or trailer section, bounded
	total    int64  // data bytes decoded so far
	max      int64  // limit on total (0: none)
	trailer  []byte // raw trailer field lines, each ending in CRLF, validated
	err      error
}

const (
	chSize      = iota // hex digits of chunk-size
	chSizeWS           // BWS between chunk-size and ";"
	chExt              // chunk-ext, ignored up to CR
	chSizeLF           // LF ending the size line
	chData             // chunk data
	chDataCR           // CR after chunk data
	chDataLF           // LF after chunk data
	chTrailer          // start of a trailer line, or the final CRLF
	chTrailerLn        // inside a trailer field line
	chEndLF            // LF of the final CRLF
	chDone
)

// Limits on framing bytes: a chunk-size line with its extensions, and the trailer section. They
// keep a client from making the server hold or scan unbounded framing.
const (
	maxChunkLine   = 4096
	maxTrailerSize = 16 << 10
)

var (
	errChunkSize     = &framingError{"invalid chunk size"}
	errChunkOverflow = &framingError{"chunk size too large"}
	errChunkExt      = &framingError{"invalid chunk extension"}
	errChunkLine     = &framingError{"chunk size line too long"}
	errChunkCRLF     = &framingError{"missing CRLF after chunk data"}
	errChunkLF       = &framingError{"line not ended by CRLF"}
	errTrailer       = &framingError{"invalid trailer field"}
	errTrailerSize   = &framingError{"trailer section too large"}
)

// decode consumes framing and data from src and copies body bytes into dst (a nil dst discards
// them, up to len(src)). It returns the body bytes produced and the src bytes consumed; err is
// io.EOF once the last chunk and the trailer section have been read.
func (d *chunkedDecoder) decode(dst, src []byte) (nd, ns int, err error) {
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
func (d *chunkedDecoder) framing(c byte) error {
	switch d.state {
	case chSize:
		if v := unhex(c); v >= 0 {
			if d.size>>59 != 0 {
				return errChunkOverflow
			}
			d.size = d.size<<4 | uint64(v)
			d.sawDigit = true
			return d.countLine()
		}
		if !d.sawDigit {
			return errChunkSize
		}
		switch c {
		case '\r':
			d.state = chSizeLF
		case ';':
			d.state = chExt
		case ' ', '\t':
			d.state = chSizeWS
		default:
			return errChunkSize
		}
	case chSizeWS:
		// RFC 9112 §7.1.1: whitespace after chunk-size is allowed only before an extension.
		switch c {
		case ' ', '\t':
		case ';':
			d.state = chExt
		default:
			return errChunkSize
		}
		return d.countLine()
	case chExt:
		// Extensions are ignored (RFC 9112 §7.1.1), but still may not hold CTLs or a bare LF.
		if c == '\r' {
			d.state = chSizeLF
		} else if !isValueByte[c] {
			return errChunkExt
		}
		return d.countLine()
	case chSizeLF:
		if c != '\n' {
			return errChunkLF
		}
		d.lineLen = 0
		d.sawDigit = false
		if d.size == 0 {
			d.state = chTrailer
			return nil
		}
		if d.max > 0 && d.total+int64(d.size) > d.max {
			return ErrBodyTooLarge
		}
		d.total += int64(d.size)
		d.state = chData
	case chDataCR:
		if c != '\r' {
			return errChunkCRLF
		}
		d.state = chDataLF
	case chDataLF:
		if c != '\n' {
			return errChunkCRLF
		}
		d.state = chSize
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
			return errChunkLF
		}
		d.state = chDone
	}
	return nil
}

func (d *chunkedDecoder) countLine() error {
	d.lineLen++
	if d.lineLen > maxChunkLine {
		return errChunkLine
	}
	return nil
}

// trailerByte collects a trailer field line (RFC 9112 §7.1.2) and validates it like a header
// field once its LF arrives.
func (d *chunkedDecoder) trailerByte(c byte) error {
	if len(d.trailer) >= maxTrailerSize {
		return errTrailerSize
	}
	d.trailer = append(d.trailer, c)
	if c != '\n' {
		return nil
	}
	line := d.trailer[lastLineStart(d.trailer):]
	if _, _, rej := parseField(line, 0); rej != nil {
		return errTrailer
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

func (d *chunkedDecoder) reset(max int64) {
	t := d.trailer[:0]
	*d = chunkedDecoder{max: max, trailer: t}
}

// trailers calls f for each trailer field collected, in order.
func (d *chunkedDecoder) trailers(f func(name, value []byte) bool) {
	b := d.trailer
	for i := 0; i < len(b); {
		fl, next, rej := parseField(b, i)
		if rej != nil {
			return
		}
		if !f(b[fl.name.off:fl.name.off+fl.name.n], b[fl.value.off:fl.value.off+fl.value.n]) {
			return
		}
		i = next
	}
}
