// Package frame is the WebSocket framing of RFC 6455 §5 as pure functions over bytes, with no
// connection in sight, so that it can be tested and fuzzed alone:
//
//   - Parse reads a frame header from bytes that may arrive in pieces, refusing what §5.2 and
//     §5.5 forbid whatever was negotiated (reserved opcodes, long or fragmented control frames,
//     a 64-bit length with its top bit set);
//   - AppendHeader writes a header in its shortest form;
//   - Mask applies the masking of §5.3, a word at a time, to a payload in one piece or several;
//   - ParseClose and AppendClose read and write the body of a Close frame (§5.5.1, §7.4).
//
// What depends on the connection is left to the caller, which reads it from Header: whether an
// RSV bit is allowed (only by a negotiated extension, §5.2), whether the frame must be masked
// (from a client, always; §5.1), whether a continuation frame is expected (§5.4), and how large a
// payload it is willing to take.
package frame
