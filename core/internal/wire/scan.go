package wire

import (
	"bytes"

	"github.com/dwellhttp/dwell/internal/syntax"
)

// HeadScan finds the end of a request head in bytes that arrive in pieces of any size. It keeps
// only where it stopped, so a head trickled in a byte at a time is scanned once in all, not once
// per byte (a slowloris client costs no CPU), and it enforces the size limits while the head is
// still incomplete, so an oversized head is refused without being held. Every connection holds
// one, so it keeps no more than it needs: whether the request line is complete is told by
// firstLine, not by a count of lines.
type HeadScan struct {
	lineStart int32 // start of the line being scanned
	pos       int32 // bytes of that line already searched for LF
	firstLine int32 // length of the request line, once seen; 0 while in the request line
}

// Outcomes of scan besides the head's length.
const (
	ScanMore = -1 // the head is not complete yet
)

// SkipEmptyLines drops the empty lines a client may send before a request (RFC 9112 §2.2: a
// server SHOULD ignore at least one empty line received prior to the request-line). It returns
// the remaining input and whether a lone CR at the end needs more bytes to decide.
func SkipEmptyLines(in []byte) ([]byte, bool) {
	for len(in) > 0 {
		switch {
		case in[0] == '\n':
			in = in[1:]
		case in[0] == '\r' && len(in) == 1:
			return in, true
		case in[0] == '\r' && in[1] == '\n':
			in = in[2:]
		default:
			return in, false
		}
	}
	return in, false
}

// Scan continues over in (which starts at the head's first byte) and returns the head's length,
// including its final empty line, or ScanMore. A non-zero status means the head is refused:
// 400 when the request line does not begin with a method (a token, RFC 9112 §3) — bytes that
// can start no request are refused as they arrive, not once a line or the size limit or the
// header timeout ends them — 414 when the request line alone is over max, 431 when the header
// section is.
func (s *HeadScan) Scan(in []byte, max int) (n int, status int) {
	for {
		i := bytes.IndexByte(in[s.pos:], '\n')
		if i < 0 {
			s.pos = int32(len(in))
			switch {
			case s.firstLine == 0 && !startsWithMethod(in[:min(len(in), max+1)]):
				return ScanMore, 400
			case beforeEnd(in, len(in)) <= max:
				return ScanMore, 0
			case s.firstLine == 0:
				return ScanMore, 414
			}
			return ScanMore, 431
		}
		nl := int(s.pos) + i
		start := int(s.lineStart)
		empty := nl == start || (nl == start+1 && in[start] == '\r')
		requestLine := s.firstLine == 0
		if requestLine {
			if !startsWithMethod(in[:min(nl, max+1)]) {
				return ScanMore, 400
			}
			s.firstLine = int32(nl + 1)
		}
		s.lineStart = int32(nl + 1)
		s.pos = s.lineStart
		if beforeEnd(in, nl) > max {
			if requestLine {
				return ScanMore, 414
			}
			return ScanMore, 431
		}
		if empty && !requestLine {
			return nl + 1, 0
		}
	}
}

// beforeEnd returns how many bytes of in come before a line's end at end (its LF, or where the
// bytes stop), not counting a CR right before it: what the limits count is the head up to its
// latest line's end, so that a line ending at the limit is refused or not whether its CR and LF
// arrive together or apart.
func beforeEnd(in []byte, end int) int {
	if end > 0 && in[end-1] == '\r' {
		return end - 1
	}
	return end
}

// Reset readies the scanner for the next head.
func (s *HeadScan) Reset() { *s = HeadScan{} }

// Fresh reports whether the scanner has seen nothing of the head yet: the input starts at the
// head's first byte, or at empty lines before it.
func (s *HeadScan) Fresh() bool { return s.firstLine == 0 && s.pos == 0 }

// startsWithMethod reports whether the start of a request line can be a method: token bytes up
// to the first space, or to the end of what has come.
func startsWithMethod(line []byte) bool {
	for i, ch := range line {
		if ch == ' ' {
			return i > 0
		}
		if !syntax.IsTchar[ch] {
			return false
		}
	}
	return true
}
