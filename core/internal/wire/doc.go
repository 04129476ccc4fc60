// Package wire is HTTP/1.1's wire format as dwell's loops read and write it, with no loop in
// sight, so that it can be tested and fuzzed alone:
//
//   - HeadScan finds the end of a request head in input that arrives in pieces, enforcing the
//     size limits while the head is still incomplete;
//   - ParseHead parses a complete head in place into a Request — request line, fields, the
//     framing they imply (RFC 9112 §6.3), the request-target's form (§3.2) — refusing, with a
//     Reject that says which status to answer, everything RFC 9112 and 9110 refuse;
//   - Request is the parsed head, moved into a pooled arena sized for it (Adopt), with the
//     accessors that read it: every value they return is borrowed from the arena;
//   - ChunkedDecoder decodes the chunked transfer coding (§7.1), extensions and trailers
//     included, with bounds on framing;
//   - StatusText, AppendStatusLine and AppendChunkSize write the response side.
//
// Every refusal in the parser cites the RFC section it follows.
package wire
