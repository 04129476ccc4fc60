package h2

// staticField is an entry of the static table.
type staticField struct{ name, value []byte }

// staticTable is RFC 7541 Appendix A: index i is staticTable[i-1].
var staticTable = func() []staticField {
	fields := [...][2]string{
		{":authority", ""}, {":method", "GET"}, {":method", "POST"}, {":path", "/"},
		{":path", "/index.html"}, {":scheme", "http"}, {":scheme", "https"}, {":status", "200"},
		{":status", "204"}, {":status", "206"}, {":status", "304"}, {":status", "400"},
		{":status", "404"}, {":status", "500"}, {"accept-charset", ""},
		{"accept-encoding", "gzip, deflate"}, {"accept-language", ""}, {"accept-ranges", ""},
		{"accept", ""}, {"access-control-allow-origin", ""}, {"age", ""}, {"allow", ""},
		{"authorization", ""}, {"cache-control", ""}, {"content-disposition", ""},
		{"content-encoding", ""}, {"content-language", ""}, {"content-length", ""},
		{"content-location", ""}, {"content-range", ""}, {"content-type", ""}, {"cookie", ""},
		{"date", ""}, {"etag", ""}, {"expect", ""}, {"expires", ""}, {"from", ""}, {"host", ""},
		{"if-match", ""}, {"if-modified-since", ""}, {"if-none-match", ""}, {"if-range", ""},
		{"if-unmodified-since", ""}, {"last-modified", ""}, {"link", ""}, {"location", ""},
		{"max-forwards", ""}, {"proxy-authenticate", ""}, {"proxy-authorization", ""},
		{"range", ""}, {"referer", ""}, {"refresh", ""}, {"retry-after", ""}, {"server", ""},
		{"set-cookie", ""}, {"strict-transport-security", ""}, {"transfer-encoding", ""},
		{"user-agent", ""}, {"vary", ""}, {"via", ""}, {"www-authenticate", ""},
	}
	t := make([]staticField, len(fields))
	for i, f := range fields {
		t[i] = staticField{[]byte(f[0]), []byte(f[1])}
	}
	return t
}()

// staticNames maps a name of the static table to the index of its first entry.
var staticNames = func() map[string]int {
	m := make(map[string]int, len(staticTable))
	for i := len(staticTable) - 1; i >= 0; i-- {
		m[string(staticTable[i].name)] = i + 1
	}
	return m
}()

// staticName returns the index of the static table's first entry named name, 0 for none: one
// map lookup per field a response sends, which the conversion does not allocate for.
func staticName(name []byte) int { return staticNames[string(name)] }

// The appenders of a response's fields. They index nothing, so the client's table is never
// changed by the server and the server keeps no table; a string goes Huffman-encoded when that
// is shorter.

// AppendStatus appends the :status field of code: an index for the codes the static table
// holds, a literal otherwise.
func AppendStatus(dst []byte, code int) []byte {
	for i := 8; i <= 14; i++ {
		if v := staticTable[i-1].value; len(v) == 3 && int(v[0]-'0')*100+int(v[1]-'0')*10+int(v[2]-'0') == code {
			return appendInt(dst, 0x80, 7, uint64(i))
		}
	}
	var v [3]byte
	v[0], v[1], v[2] = byte('0'+code/100%10), byte('0'+code/10%10), byte('0'+code%10)
	dst = appendInt(dst, 0x00, 4, 8) // without indexing, the name :status's index
	return appendString(dst, v[:])
}

// AppendField appends a field as a literal without indexing — never indexed when sensitive
// (RFC 7541 §6.2.3: a Set-Cookie, an Authorization) — naming it by the static table's index
// when it has the name. name must be in lower case (RFC 9113 §8.2.1).
func AppendField(dst, name, value []byte, sensitive bool) []byte {
	first := byte(0x00)
	if sensitive {
		first = 0x10
	}
	if i := staticName(name); i > 0 {
		dst = appendInt(dst, first, 4, uint64(i))
	} else {
		dst = append(dst, first)
		dst = appendString(dst, name)
	}
	return appendString(dst, value)
}

// appendInt appends v as an integer of an n-bit prefix (RFC 7541 §5.1), the prefix's other
// bits those of first.
func appendInt(dst []byte, first byte, n uint8, v uint64) []byte {
	mask := uint64(1)<<n - 1
	if v < mask {
		return append(dst, first|byte(v))
	}
	dst = append(dst, first|byte(mask))
	for v -= mask; v >= 0x80; v >>= 7 {
		dst = append(dst, byte(v)|0x80)
	}
	return append(dst, byte(v))
}

// appendString appends s as a string literal (RFC 7541 §5.2), Huffman-encoded when shorter.
func appendString(dst, s []byte) []byte {
	if n := huffmanLen(s); n < len(s) {
		dst = appendInt(dst, 0x80, 7, uint64(n))
		return appendHuffman(dst, s)
	}
	dst = appendInt(dst, 0x00, 7, uint64(len(s)))
	return append(dst, s...)
}

// AppendLiteralIndexed appends a field as a literal with incremental indexing and a new name
// (RFC 7541 §6.2.1): what a client sends for a field it wants in the server's table. The
// server's own fields do not use it; tests and fuzzing do.
func AppendLiteralIndexed(dst, name, value []byte) []byte {
	dst = append(dst, 0x40)
	dst = appendString(dst, name)
	return appendString(dst, value)
}
