// Package h2 is HTTP/2's frame layer (RFC 9113 §4 and §6) and HPACK (RFC 7541), with no loop in
// them: frame headers read and written, each frame type's payload checked and taken apart in
// place, the frames a server sends appended to a buffer; a connection's request field blocks
// decoded with its dynamic table (bounded by the size the server announced, and allocation-free
// once its buffers have grown), and a response's fields appended without indexing; a request's
// fields checked as RFC 9113 §8 asks of a server (RequestCheck); a stream's states and the
// errors a frame in the wrong one is (§5.1, StreamState); flow-control windows both ways
// (§5.2, §6.9: SendWindow, RecvWindow). A parse
// never keeps its input: what it returns (a DATA frame's data, a header block fragment, a
// field's name and value) points into it, or into the decoder's buffers until the next call.
// xnettest checks the HPACK against golang.org/x/net's, in a module of its own.
//
// A malformed frame or field block is an error of the whole connection (*ConnError, answered with GOAWAY and
// its code) or of one stream (*StreamError, answered with RST_STREAM), as §5.4 says which; the
// caller decides what follows. What the frame layer cannot know — stream states, flow-control
// windows, header list sizes — is the connection's to check.
package h2
