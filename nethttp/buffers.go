package nethttp

// The bridge's buffers, from dwell's shared buffer pool (bufpool.Get, Put): what a handler's
// small writes gather in before they go to the loop in one call, and what its small reads are
// served from. A response
// starts with a small buffer, as net/http's does (4 KiB), and moves to a large one once it has
// filled the first: a response that long is a stream, copied 32 KiB at a time, io.Copy's piece.
const (
	bufferSize      = 4 << 10
	largeBufferSize = 32 << 10
)
