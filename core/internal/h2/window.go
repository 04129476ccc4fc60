package h2

// Flow control (RFC 9113 §5.2, §6.9): the windows a connection keeps, in both directions, for
// itself and for each stream.

// DefaultWindow is every window's size until SETTINGS say otherwise (RFC 9113 §6.9.2).
const DefaultWindow = 65535

// A SendWindow is how many bytes of DATA the peer lets the server send (on a stream, or on the
// connection). SETTINGS_INITIAL_WINDOW_SIZE changes every stream's by the difference, which
// may make it negative (§6.9.2): then nothing may be sent until WINDOW_UPDATEs lift it.
type SendWindow int64

// Update adds a WINDOW_UPDATE's increment; a window past 2^31-1 is a FLOW_CONTROL_ERROR, of the
// stream id, or of the connection when id is 0 (§6.9.1).
func (w *SendWindow) Update(id, inc uint32) error {
	n := int64(*w) + int64(inc)
	if n > MaxWindow {
		if id == 0 {
			return connErr(FlowControlError, "connection window past 2^31-1")
		}
		return streamErr(id, FlowControlError, "stream window past 2^31-1")
	}
	*w = SendWindow(n)
	return nil
}

// Resize applies a change of SETTINGS_INITIAL_WINDOW_SIZE from old to new to a stream's window;
// past 2^31-1 it is a connection FLOW_CONTROL_ERROR (§6.9.2).
func (w *SendWindow) Resize(old, new uint32) error {
	n := int64(*w) + int64(new) - int64(old)
	if n > MaxWindow {
		return connErr(FlowControlError, "SETTINGS_INITIAL_WINDOW_SIZE takes a stream window past 2^31-1")
	}
	*w = SendWindow(n)
	return nil
}

// Allows returns how many of n bytes may be sent now: none while the window is not positive.
func (w SendWindow) Allows(n int) int {
	if w <= 0 {
		return 0
	}
	return int(min(int64(n), int64(w)))
}

// Take records that n bytes were sent, n no more than Allows gave.
func (w *SendWindow) Take(n int) { *w -= SendWindow(n) }

// A RecvWindow is how many bytes of DATA the server lets the client send, and how many it has
// consumed (handed to the handler, or dropped) without telling the client yet. The server gives
// back what is consumed with a WINDOW_UPDATE once it is half the window or more, so that a
// client that keeps sending is not held up, and a handler that reads nothing holds the client
// back rather than buffering: received but unconsumed bytes are never given back.
type RecvWindow struct {
	left     int64  // what the client may still send
	Size     uint32 // the window the server announced
	consumed uint32 // bytes consumed and not given back yet (beside Size: no padding, as every stream holds one)
}

// NewRecvWindow returns a window of size bytes.
func NewRecvWindow(size uint32) RecvWindow { return RecvWindow{Size: size, left: int64(size)} }

// Receive records a DATA frame's flow-controlled length (its whole payload, padding included);
// more than the window allows is a FLOW_CONTROL_ERROR, of stream id, or of the connection when id
// is 0 (§6.9.1).
func (w *RecvWindow) Receive(id uint32, n uint32) error {
	if int64(n) > w.left {
		if id == 0 {
			return connErr(FlowControlError, "DATA past the connection's window")
		}
		return streamErr(id, FlowControlError, "DATA past the stream's window")
	}
	w.left -= int64(n)
	return nil
}

// Consume records that n received bytes are done with, and returns the increment of the
// WINDOW_UPDATE to send now, 0 for none yet.
func (w *RecvWindow) Consume(n uint32) uint32 {
	w.consumed += n
	if w.consumed < w.Size/2 {
		return 0 // a client blocked on a full window gets it back once the handler has read half
	}
	inc := w.consumed
	w.consumed = 0
	w.left += int64(inc)
	return inc
}
