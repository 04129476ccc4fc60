package h2

// HPACK (RFC 7541): the decoder of a connection's request field blocks, with its dynamic table,
// and the appenders of a response's fields, which index nothing (no dynamic table of the
// server's, so nothing to keep per connection on the way out).

// A Decoder decodes the field blocks a client sends on one connection, in order. Its dynamic
// table is bounded by the size the server announced (SETTINGS_HEADER_TABLE_SIZE), and its
// memory by about twice that: entries are kept in one buffer, oldest first, and compacted.
type Decoder struct {
	max  uint32 // the size the server allows the table
	size uint32 // the table's maximum, as the client last set it (≤ max)
	used uint32 // the size of its entries (RFC 7541 §4.1)

	entries []tableEntry // oldest first, from head on
	head    int
	data    []byte // the entries' names and values, oldest first (from entries[head].off on)

	scratch []byte // the Huffman-decoded strings of the field being decoded
}

// A tableEntry is a field of the dynamic table: where its name and value are in data.
type tableEntry struct{ off, nameLen, valueLen uint32 }

// NewDecoder returns a Decoder whose dynamic table may grow to max bytes (4,096 is HPACK's
// default; a server that announces nothing allows that).
func NewDecoder(max uint32) *Decoder { return &Decoder{max: max, size: max} }

// hpackErr is the connection error a malformed field block is (RFC 9113 §4.3).
func hpackErr(reason string) error { return connErr(CompressionError, reason) }

// Decode decodes block, a whole field block (a HEADERS frame's fragment and its CONTINUATIONs'),
// calling f with each field in order: name and value are valid during the call only, and
// sensitive is set for a field the client asked never to be indexed (RFC 7541 §6.2.3). f's
// error stops the decoding and is returned; the table is then as far as the block went, so a
// connection must not decode another block after an error.
func (d *Decoder) Decode(block []byte, f func(name, value []byte, sensitive bool) error) error {
	first := true // a table size update may only begin a block (§4.2)
	for len(block) > 0 {
		b := block[0]
		d.scratch = d.scratch[:0]
		var err error
		switch {
		case b&0x80 != 0: // indexed (§6.1)
			var i uint64
			if i, block, err = readInt(block, 7); err != nil {
				return err
			}
			name, value, ok := d.at(i)
			if !ok {
				return hpackErr("index out of the tables")
			}
			if err := f(name, value, false); err != nil {
				return err
			}
		case b&0xe0 == 0x20: // dynamic table size update (§6.3)
			var n uint64
			if n, block, err = readInt(block, 5); err != nil {
				return err
			}
			if !first {
				return hpackErr("table size update after a field")
			}
			if n > uint64(d.max) {
				return hpackErr("table size update above SETTINGS_HEADER_TABLE_SIZE")
			}
			d.size = uint32(n)
			d.evict(0)
			continue
		default: // a literal (§6.2): with indexing (01), without (0000) or never indexed (0001)
			prefix, index, sensitive := uint8(4), false, b&0xf0 == 0x10
			if b&0xc0 == 0x40 {
				prefix, index = 6, true
			}
			var i uint64
			if i, block, err = readInt(block, prefix); err != nil {
				return err
			}
			var name, value []byte
			if i == 0 {
				if name, block, err = d.readString(block); err != nil {
					return err
				}
			} else {
				var ok bool
				if name, _, ok = d.at(i); !ok {
					return hpackErr("name index out of the tables")
				}
			}
			if value, block, err = d.readString(block); err != nil {
				return err
			}
			if err := f(name, value, sensitive); err != nil {
				return err
			}
			if index {
				d.add(name, value)
			}
		}
		first = false
	}
	return nil
}

// readInt reads an integer of an n-bit prefix (RFC 7541 §5.1) from the start of b, and returns
// it with the rest of b. Integers past 2^32 are refused: no index, length or size is that big.
func readInt(b []byte, n uint8) (uint64, []byte, error) {
	mask := byte(1)<<n - 1
	v := uint64(b[0] & mask)
	b = b[1:]
	if v < uint64(mask) {
		return v, b, nil
	}
	for shift := uint(0); ; shift += 7 {
		if len(b) == 0 {
			return 0, nil, hpackErr("integer cut short")
		}
		c := b[0]
		b = b[1:]
		v += uint64(c&0x7f) << shift
		if v > 1<<32 {
			return 0, nil, hpackErr("integer too large")
		}
		if c&0x80 == 0 {
			return v, b, nil
		}
	}
}

// readString reads a string literal (RFC 7541 §5.2) from the start of b: the bytes of b, or
// for a Huffman string its octets decoded into the scratch buffer.
func (d *Decoder) readString(b []byte) (s, rest []byte, err error) {
	if len(b) == 0 {
		return nil, nil, hpackErr("string missing")
	}
	huffman := b[0]&0x80 != 0
	n, b, err := readInt(b, 7)
	if err != nil {
		return nil, nil, err
	}
	if n > uint64(len(b)) {
		return nil, nil, hpackErr("string longer than the block")
	}
	s, rest = b[:n], b[n:]
	if !huffman {
		return s, rest, nil
	}
	start := len(d.scratch)
	var ok bool
	if d.scratch, ok = appendHuffmanDecoded(d.scratch, s); !ok {
		return nil, nil, hpackErr("malformed Huffman string")
	}
	return d.scratch[start:], rest, nil
}

// at returns the field at index i of the static and dynamic tables (RFC 7541 §2.3.3).
func (d *Decoder) at(i uint64) (name, value []byte, ok bool) {
	switch {
	case i == 0:
		return nil, nil, false
	case i <= uint64(len(staticTable)):
		e := &staticTable[i-1]
		return e.name, e.value, true
	}
	j := i - uint64(len(staticTable)) - 1 // 0: the newest entry
	if j >= uint64(len(d.entries)-d.head) {
		return nil, nil, false
	}
	e := d.entries[len(d.entries)-1-int(j)]
	mid, end := e.off+e.nameLen, e.off+e.nameLen+e.valueLen
	return d.data[e.off:mid], d.data[mid:end], true
}

// entrySize is an entry's size in the table (RFC 7541 §4.1).
func entrySize(name, value []byte) uint32 { return uint32(len(name) + len(value) + 32) }

// add inserts a field as the newest entry, evicting the oldest to make room (RFC 7541 §4.4): a
// field larger than the table empties it and is not kept. The field is copied in before any
// entry goes, since its name may be an entry's that is about to be evicted (§4.4's caution).
func (d *Decoder) add(name, value []byte) {
	n := entrySize(name, value)
	if n > d.size {
		d.evict(d.size + 1) // everything
		return
	}
	d.entries = append(d.entries, tableEntry{off: uint32(len(d.data)), nameLen: uint32(len(name)), valueLen: uint32(len(value))})
	d.data = append(d.data, name...)
	d.data = append(d.data, value...)
	d.used += n
	d.evict(0) // never the new entry: it fits alone
}

// evict drops the oldest entries until room more bytes fit within the table's size.
func (d *Decoder) evict(room uint32) {
	for d.head < len(d.entries) && d.used+room > d.size {
		e := d.entries[d.head]
		d.used -= e.nameLen + e.valueLen + 32
		d.head++
	}
	if d.head == len(d.entries) {
		d.entries, d.head, d.data = d.entries[:0], 0, d.data[:0]
		return
	}
	// Compact once half of what is held is evicted, so that what the table keeps stays
	// within twice its size.
	if first := d.entries[d.head].off; int(first) > len(d.data)/2 {
		d.data = d.data[:copy(d.data, d.data[first:])]
		live := d.entries[:copy(d.entries, d.entries[d.head:])]
		for i := range live {
			live[i].off -= first
		}
		d.entries, d.head = live, 0
	}
}
