// Package h2 is HTTP/2's frame layer (RFC 9113 §4 and §6) with no loop in it: frame headers read
// and written, each frame type's payload checked and taken apart in place, and the frames a
// server sends appended to a buffer. A parse never allocates and never keeps its input: what it
// returns (a DATA frame's data, a header block fragment, GOAWAY's debug data) points into it.
//
// A malformed frame is an error of the whole connection (*ConnError, answered with GOAWAY and
// its code) or of one stream (*StreamError, answered with RST_STREAM), as §5.4 says which; the
// caller decides what follows. What the frame layer cannot know — stream states, flow-control
// windows, header list sizes — is the connection's to check.
package h2
