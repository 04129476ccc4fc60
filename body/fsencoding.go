package body

import (
	"bytes"

	"github.com/dwellhttp/dwell/internal/syntax"
)

// codingWeights gathers what a request's Accept-Encoding field lines, one list (RFC 9110 §5.3),
// say of the codings a file may be sent in: add each line in order, then choose. The lines are
// read in place: nothing is allocated.
type codingWeights struct {
	weights [numCodings]int // by coding, in thousandths; -1: not named
	star    int             // the weight of "*"; -1: not named
}

func newCodingWeights() codingWeights {
	return codingWeights{weights: [numCodings]int{-1, -1, -1}, star: -1}
}

// add reads one field line of Accept-Encoding.
func (cw *codingWeights) add(ae []byte) {
	for len(ae) > 0 {
		var elem []byte
		elem, ae, _ = bytes.Cut(ae, []byte(","))
		name, params, _ := bytes.Cut(elem, []byte(";"))
		name = bytes.TrimSpace(name)
		w := syntax.QValue(params)
		var k coding
		switch {
		case bytes.EqualFold(name, []byte("br")):
			k = brotli
		case bytes.EqualFold(name, []byte("gzip")), bytes.EqualFold(name, []byte("x-gzip")):
			k = gzipped
		case bytes.EqualFold(name, []byte("identity")):
			k = identity
		case string(name) == "*":
			if cw.star < 0 {
				cw.star = w
			}
			continue
		default:
			continue
		}
		if cw.weights[k] < 0 {
			cw.weights[k] = w
		}
	}
}

// choose picks the coding in which to send a file that has the codings available (the
// identity always), by the weights of the lines added (RFC 9110 §12.5.3). The coding the
// client weighs highest wins; among compressed codings weighed alike, Brotli, which makes the
// smaller files; between a compressed coding and the identity weighed alike, the compressed
// one. The identity competes only with a weight the client gave it, by name or through "*": a
// client that lists codings has said it takes them. When the client accepts no coding
// available — no header, an empty one, or one refusing the rest, "identity;q=0" included —
// the identity is sent, as if the header were not there, which §12.5.3 allows rather than a
// 406.
//
// Names are compared without regard to case, and "x-gzip" is gzip (RFC 9110 §8.4.1.3). Of a
// coding named twice, the first element counts.
func (cw *codingWeights) choose(available [numCodings]bool) coding {
	weights := cw.weights
	for k := range weights {
		if weights[k] < 0 {
			weights[k] = cw.star // "*" stands for every coding not named; unnamed, -1 still
		}
	}
	best, bestWeight := identity, 0
	for k := brotli; k < numCodings; k++ {
		if available[k] && weights[k] > bestWeight {
			best, bestWeight = k, weights[k]
		}
	}
	if best != identity && weights[identity] > bestWeight {
		return identity
	}
	return best
}
