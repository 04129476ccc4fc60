package serve

import (
	"encoding/binary"
	"strconv"

	"github.com/dwellhttp/dwell/internal/syntax"
)

// Response header fields are kept in one buffer from the loop's pool, each as its name and its
// value, each behind its length (a uvarint): a set in neither protocol's wire format, from
// which HTTP/1.1 writes each field as its line, "Name: value\r\n" (AppendFieldLines), and
// HTTP/2 encodes each with HPACK (http2's response.go), neither taking apart what the other made.
// Setting a field copies its name and value there, so nothing a response holds points into
// memory it does not own — not into the request (whose memory is reused once the handler
// returns, which a detached response outlives), nor into anything the caller may change.

// SetHeader sets a response header field, replacing any of the same name. Date and Content-Type set
// here replace the server's; Content-Length declares the body's length (the body then streams
// without buffering); Connection: close ends the connection after the response, for good (no
// later field takes it back: the server may have decided so too); Transfer-Encoding and other
// Connection values are the server's to set and are ignored. An empty Content-Type sends none,
// where the server would send text/plain. An invalid name, a value with CR, LF or another
// control byte (which would let a client value split the response), or a Content-Length that is
// not a length or is less than the body already written, is a programming error and panics. It
// has no effect once the response has started.
func (cx *Ctx) SetHeader(name, value string) {
	cx.check("SetHeader")
	if cx.Resp&RfCommitted != 0 {
		return
	}
	k := kindOf(name)
	cx.delField(name, k)
	cx.addField(name, value, k)
}

// AddHeader adds a response header field, keeping any of the same name (as for Set-Cookie). See
// SetHeader for the special fields and validation.
func (cx *Ctx) AddHeader(name, value string) {
	cx.check("AddHeader")
	if cx.Resp&RfCommitted != 0 {
		return
	}
	cx.addField(name, value, kindOf(name))
}

// A fieldKind is what the server makes of a response field it treats specially.
type fieldKind uint8

const (
	fieldPlain fieldKind = iota
	fieldContentLength
	fieldTransferEncoding
	fieldConnection
	fieldDate
	fieldContentType
)

// kindOf classifies a field name: by its length first, so that most names cost one switch.
func kindOf(name string) fieldKind {
	var special string
	var k fieldKind
	switch len(name) {
	case 4:
		special, k = "Date", fieldDate
	case 10:
		special, k = "Connection", fieldConnection
	case 12:
		special, k = "Content-Type", fieldContentType
	case 14:
		special, k = "Content-Length", fieldContentLength
	case 17:
		special, k = "Transfer-Encoding", fieldTransferEncoding
	default:
		return fieldPlain
	}
	if syntax.EqualFold(name, special) {
		return k
	}
	return fieldPlain
}

// addField adds the field name (of kind k), or does what the special fields do instead.
func (cx *Ctx) addField(name, value string, k fieldKind) {
	if k == fieldPlain {
		checkName(name) // a special field's name matched one of the server's, so it is valid
	}
	CheckValue(name, value)
	switch k {
	case fieldContentLength:
		n, ok := syntax.ParseContentLength(value)
		if !ok {
			panic("dwell: invalid Content-Length " + strconv.Quote(value))
		}
		if n < cx.Written {
			// The held body would go out whole behind the head's shorter length, and its rest
			// be read as the next response on the connection.
			panic("dwell: Content-Length " + value + " is less than the " + strconv.FormatInt(cx.Written, 10) + " bytes of body already written")
		}
		cx.DeclLen = n
		return
	case fieldTransferEncoding:
		return
	case fieldConnection:
		if syntax.EqualFold(value, "close") {
			cx.Resp |= RfClose
		}
		return
	case fieldDate:
		cx.Resp |= RfHasDate
	case fieldContentType:
		cx.Resp |= RfHasType
		if value == "" {
			return // no Content-Type at all
		}
	}
	cx.appendField(name, value)
}

// appendField copies name and value into the response's field set, moving its buffer to a
// larger pool class when it is full.
func (cx *Ctx) appendField(name, value string) {
	x := cx.extra()
	need := len(name) + len(value) + 2*binary.MaxVarintLen64
	if cap(x.hdrs)-len(x.hdrs) < need {
		pool := &cx.Loop.Pool
		b := append(pool.Get(max(len(x.hdrs)+need, 2*cap(x.hdrs), 128)), x.hdrs...)
		if x.hdrs != nil {
			pool.Put(x.hdrs)
		}
		x.hdrs = b
	}
	x.names |= NameBit(name)
	x.hdrs = binary.AppendUvarint(x.hdrs, uint64(len(name)))
	x.hdrs = append(x.hdrs, name...)
	x.hdrs = binary.AppendUvarint(x.hdrs, uint64(len(value)))
	x.hdrs = append(x.hdrs, value...)
}

// DelHeader removes the response header fields named name (but Connection: close, see
// SetHeader). It has no effect once the response has started.
func (cx *Ctx) DelHeader(name string) {
	cx.check("DelHeader")
	if cx.Resp&RfCommitted != 0 {
		return
	}
	cx.delField(name, kindOf(name))
}

// delField removes the fields named name (of kind k).
func (cx *Ctx) delField(name string, k fieldKind) {
	switch k {
	case fieldContentLength:
		cx.DeclLen = -1
	case fieldDate:
		cx.Resp &^= RfHasDate
	case fieldContentType:
		cx.Resp &^= RfHasType
	}
	if x := cx.Extra; x == nil || x.names&NameBit(name) == 0 {
		return // no line has the name: setting a field is then one append, not a scan of the others
	}
	cx.dropFields(func(n []byte) bool { return syntax.EqualFold(BorrowString(n), name) })
}

// NameBit is a field name's bit in ctxExtra.names, from its length and its first byte with
// the ASCII case bit set: names equal without regard to case have the same bit, so a name whose
// bit is clear is in no line. (Different names may share a bit; they are then told apart by a
// scan.)
func NameBit(name string) uint64 {
	if name == "" {
		return 1
	}
	return 1 << ((uint(len(name)) + uint(name[0]|0x20)) % 64)
}

// dropFields removes the fields whose name drop reports true for.
func (cx *Ctx) dropFields(drop func(name []byte) bool) {
	x := cx.Extra
	if x == nil {
		return
	}
	b := x.hdrs
	k := 0
	for i := 0; i < len(b); {
		name, _, next := NextField(b, i)
		if !drop(name) {
			if k != i { // fields move only once one before them was dropped
				copy(b[k:], b[i:next])
			}
			k += next - i
		}
		i = next
	}
	x.hdrs = b[:k]
}

// NextField returns the name and value of the field of set b starting at b[i], and where the
// next one starts. The set holds only what appendField wrote.
func NextField(b []byte, i int) (name, value []byte, next int) {
	n, k := uvarint(b, i)
	i += k
	name = b[i : i+n]
	i += n
	n, k = uvarint(b, i)
	i += k
	return name, b[i : i+n], i + n
}

// uvarint reads the uvarint at b[i], as binary.Uvarint does, with the one-byte lengths of
// most fields' names and values read at once.
func uvarint(b []byte, i int) (n, size int) {
	if c := b[i]; c < 0x80 {
		return int(c), 1
	}
	v, k := binary.Uvarint(b[i:])
	return int(v), k
}

// AppendFieldLines appends the response's fields as HTTP/1.1 writes them, one line each.
func (cx *Ctx) AppendFieldLines(b []byte) []byte {
	set := cx.FieldSet()
	for i := 0; i < len(set); {
		name, value, next := NextField(set, i)
		b = append(b, name...)
		b = append(b, ": "...)
		b = append(b, value...)
		b = append(b, "\r\n"...)
		i = next
	}
	return b
}

// HasField reports whether the response has a field named name (case-insensitive), without a
// copy of its value.
func (cx *Ctx) HasField(name string) bool {
	x := cx.Extra
	if x == nil || x.names&NameBit(name) == 0 {
		return false
	}
	for i := 0; i < len(x.hdrs); {
		n, _, next := NextField(x.hdrs, i)
		if syntax.EqualFold(BorrowString(n), name) {
			return true
		}
		i = next
	}
	return false
}

// FieldLinesRoom bounds what AppendFieldLines appends: a field's line adds 4 bytes to its name
// and value, and its lengths take 2 bytes at least in the set.
func (cx *Ctx) FieldLinesRoom() int { return 2 * len(cx.FieldSet()) }

// ResponseHeader returns the value of the first response field named name set so far, or "";
// for Connection, "close" once the response asks for the close (SetHeader, or the server's own
// answers; a client's Connection: close is the request's, read with Header).
func (cx *Ctx) ResponseHeader(name string) string {
	cx.check("ResponseHeader")
	if syntax.EqualFold(name, "Content-Length") && cx.DeclLen >= 0 {
		return strconv.FormatInt(cx.DeclLen, 10)
	}
	if cx.Resp&RfClose != 0 && syntax.EqualFold(name, "Connection") {
		return "close"
	}
	if cx.Extra == nil || cx.Extra.names&NameBit(name) == 0 {
		return ""
	}
	b := cx.Extra.hdrs
	for i := 0; i < len(b); {
		n, v, next := NextField(b, i)
		if syntax.EqualFold(BorrowString(n), name) {
			return string(v)
		}
		i = next
	}
	return ""
}

// FieldSet returns the response's field set (see NextField).
func (cx *Ctx) FieldSet() []byte {
	if cx.Extra == nil {
		return nil
	}
	return cx.Extra.hdrs
}

// clearHeaders empties the field buffer for the Ctx's next request, which most likely sets
// fields too: it stays with the Ctx, unless a large response grew it.
func (cx *Ctx) clearHeaders() {
	x := cx.Extra
	if x == nil || x.hdrs == nil {
		return
	}
	x.names = 0
	if cap(x.hdrs) > keptHeaderBuffer {
		cx.Loop.Pool.Put(x.hdrs)
		x.hdrs = nil
		return
	}
	x.hdrs = x.hdrs[:0]
}

// keptHeaderBuffer bounds the field buffer a Ctx keeps between requests.
const keptHeaderBuffer = 512

// dropRepresentation removes the fields that describe a response's content (its type,
// encoding, validators, range), keeping the rest — a request id or CORS fields a middleware
// set — for an error response that replaces the content.
func (cx *Ctx) dropRepresentation() {
	cx.Resp &^= RfHasType
	cx.DeclLen = -1
	cx.dropFields(func(n []byte) bool {
		for _, r := range representationFields {
			if syntax.EqualFold(BorrowString(n), r) {
				return true
			}
		}
		return false
	})
}

// representationFields describe the content of a response (RFC 9110 §8) or how to cache it.
var representationFields = [...]string{
	"Content-Type", "Content-Encoding", "Content-Language", "Content-Location", "Content-Range",
	"Content-Disposition", "ETag", "Last-Modified", "Accept-Ranges", "Cache-Control", "Expires",
}

// checkName panics unless name is a token (RFC 9110 §5.1): anything else could end the field
// line early or start another.
func checkName(name string) {
	switch {
	case name == "":
		panic("dwell: empty header field name")
	case !syntax.IsToken(name):
		panic("dwell: invalid header field name " + strconv.Quote(name))
	}
}

// CheckValue panics if value holds CR, LF or another control byte, which would let a value
// split the response.
func CheckValue(name, value string) {
	if !syntax.IsFieldValue(value) {
		panic("dwell: invalid byte in the value of header field " + name + ": " + strconv.Quote(value))
	}
}
