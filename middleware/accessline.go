package middleware

import (
	"strconv"
	"unicode/utf8"

	"github.com/dwellhttp/dwell/core"
)

// appendLine appends the entry's access-log line, as slog's JSONHandler writes the record that
// write logs: the same keys in the same order, the same encoding of each value (FuzzAccessLine
// holds the two to the same bytes). The time, d.Time, is formatted through stamps. Attributes
// added with AddLogAttrs are not written here: a line with some goes through slog.
func (e *logEntry) appendLine(b []byte, stamps *stampCache, d core.Done) []byte {
	b = append(b, `{"time":"`...)
	b = stamps.append(b, d.Time)
	b = append(b, `","level":"INFO","msg":"request","method":`...)
	b = appendJSONString(b, e.method)
	b = append(b, `,"path":`...)
	b = appendJSONString(b, e.pathBytes)
	if e.route != "" {
		b = append(b, `,"route":`...)
		b = appendJSONString(b, e.route)
	}
	b = append(b, `,"status":`...)
	if d.Status >= 100 && d.Status <= 999 {
		b = append(b, threeDigits[d.Status][:]...)
	} else {
		b = strconv.AppendInt(b, int64(d.Status), 10)
	}
	b = append(b, `,"bytes":`...)
	b = appendInt(b, d.Bytes)
	b = append(b, `,"duration":`...)
	b = appendInt(b, int64(d.Duration))
	if e.id != "" {
		b = append(b, `,"request_id":`...)
		b = appendJSONString(b, e.id)
	}
	if d.Err != nil {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, d.Err.Error())
	}
	if e.fields == 0 && len(e.extra.added) == 0 {
		return append(b, "}\n"...) // none of the fields below, which only the LogFields set
	}
	x := &e.extra
	if x.remote.IsValid() {
		b = append(b, `,"remote_addr":"`...)
		b = x.remote.AppendTo(b) // digits, dots, colons and a zone of letters: nothing to escape
		b = append(b, '"')
	}
	for _, f := range [...]struct {
		key, val string
	}{{"host", x.host}, {"user_agent", x.userAgent}, {"referer", x.referer}} {
		if f.val != "" {
			b = append(b, `,"`...)
			b = append(b, f.key...)
			b = append(b, `":`...)
			b = appendJSONString(b, f.val)
		}
	}
	if e.fields&LogRequestBytes != 0 && x.requestBytes >= 0 {
		b = append(b, `,"request_bytes":`...)
		b = strconv.AppendInt(b, x.requestBytes, 10)
	}
	if x.traceID != "" {
		b = append(b, `,"trace_id":`...)
		b = appendJSONString(b, x.traceID)
	}
	return append(b, "}\n"...)
}

// appendJSONString appends s as a JSON string the way slog's JSONHandler does: '"', '\\' and
// control characters escaped (\n, \r, \t by name, others as \u00XX), invalid UTF-8 replaced by
// \ufffd, U+2028 and U+2029 escaped (they end lines in JavaScript), and nothing else — '<',
// '>' and '&' stay as they are.
func appendJSONString[S string | []byte](b []byte, s S) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		for i < len(s) && jsonPlain[s[i]] { // most strings are all plain: one pass, one copy
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendInt appends v in decimal, as strconv.AppendInt(b, v, 10) does, three digits at a time.
func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		return strconv.AppendInt(b, v, 10)
	}
	var buf [20]byte
	i := len(buf)
	u := uint64(v)
	for u >= 1000 {
		q := u / 1000
		i -= 3
		copy(buf[i:], threeDigits[u-q*1000][:])
		u = q
	}
	d := threeDigits[u] // the first group, without its leading zeros
	switch {
	case u >= 100:
		i -= 3
		copy(buf[i:], d[:])
	case u >= 10:
		i -= 2
		copy(buf[i:], d[1:])
	default:
		i--
		buf[i] = d[2]
	}
	return append(b, buf[i:]...)
}

// threeDigits holds the three decimal digits of 0 to 999, with leading zeros: the statuses,
// and the parts of a fraction of a second.
var threeDigits = func() (t [1000][3]byte) {
	for i := range t {
		t[i] = [3]byte{byte('0' + i/100), byte('0' + i/10%10), byte('0' + i%10)}
	}
	return t
}()

// jsonPlain marks the bytes a JSON string holds as they are: printable ASCII but '"' and '\\'.
var jsonPlain = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
