// Package deflate is the permessage-deflate extension of RFC 7692 with no connection in sight,
// so that it can be tested and fuzzed alone:
//
//   - Negotiate reads the Sec-WebSocket-Extensions field lines of a client's handshake (the
//     grammar of RFC 6455 §9.1), picks the first permessage-deflate offer the server can accept
//     and gives the response (RFC 7692 §5, §7.1), in one pass that allocates nothing;
//   - Compressor and Decompressor transform one message's payload each way (§7.2), with or
//     without context takeover, the decompressor bounded by a limit on the inflated size.
//
// The memory a connection holds between messages is the point of the design: without context
// takeover, which Negotiate asks for unless told otherwise, a connection holds nothing, the
// flate state being pooled for the length of one call; with it, the cost is stated on
// NewCompressor and NewDecompressor.
package deflate
