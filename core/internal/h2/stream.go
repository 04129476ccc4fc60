package h2

// A stream's states, as a server sees them (RFC 9113 §5.1). A server pushes nothing, so the
// reserved states never occur; closed is told apart by how it came, since what a frame that
// arrives after the close means depends on it.

// A StreamState is a stream's state.
type StreamState uint8

// The states of a stream.
const (
	StateIdle             StreamState = iota
	StateOpen                         // both sides may send
	StateHalfClosedLocal              // the server has ended its side (END_STREAM sent)
	StateHalfClosedRemote             // the client has ended its side (END_STREAM received)
	StateClosed                       // both sides ended their streams
	StateResetByPeer                  // the client sent RST_STREAM
	StateResetLocal                   // the server sent RST_STREAM
)

var stateNames = [...]string{"idle", "open", "half-closed (local)", "half-closed (remote)", "closed",
	"closed (reset by the client)", "closed (reset by the server)"}

func (s StreamState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "invalid"
}

// Recv returns the state of stream id after a frame of type t with flags fl arrives on it in
// state s, or the error the frame is (§5.1): a connection error for a frame a stream's
// history makes impossible (anything but HEADERS or PRIORITY on an idle stream; DATA or
// HEADERS after the client ended the stream and the server did too), a stream error for one
// that ends the stream (DATA or HEADERS after the client's END_STREAM or RST_STREAM, trailers
// without END_STREAM). A frame that may arrive after a close of the server's own (a
// WINDOW_UPDATE or RST_STREAM after END_STREAM, anything after RST_STREAM) leaves the state as
// it is: the connection still counts its DATA against its window. Types other than those that
// concern a stream leave it as it is too.
func (s StreamState) Recv(id uint32, t Type, fl Flags) (StreamState, error) {
	end := fl.Has(FlagEndStream) && (t == TypeData || t == TypeHeaders)
	switch t {
	case TypePriority:
		return s, nil // on any stream, in any state
	case TypeData, TypeHeaders, TypeRSTStream, TypeWindowUpdate:
	default:
		return s, nil // CONTINUATION belongs to the field block, which the connection assembles
	}
	switch s {
	case StateIdle:
		if t != TypeHeaders {
			return s, connErr(ProtocolError, t.String()+" frame on an idle stream")
		}
		if end {
			return StateHalfClosedRemote, nil
		}
		return StateOpen, nil
	case StateOpen, StateHalfClosedLocal:
		switch {
		case t == TypeRSTStream:
			return StateResetByPeer, nil
		case t == TypeHeaders && !end:
			return s, streamErr(id, ProtocolError, "trailers without END_STREAM")
		case !end:
			return s, nil
		case s == StateOpen:
			return StateHalfClosedRemote, nil
		}
		return StateClosed, nil
	case StateHalfClosedRemote:
		switch t {
		case TypeRSTStream:
			return StateResetByPeer, nil
		case TypeWindowUpdate:
			return s, nil
		}
		return s, streamErr(id, StreamClosed, t.String()+" frame after the client ended the stream")
	case StateClosed:
		if t == TypeData || t == TypeHeaders {
			return s, connErr(StreamClosed, t.String()+" frame on a stream both sides ended")
		}
		return s, nil // a WINDOW_UPDATE or RST_STREAM sent before the client saw our end
	case StateResetByPeer:
		return s, streamErr(id, StreamClosed, t.String()+" frame after RST_STREAM")
	}
	return s, nil // StateResetLocal: frames the client sent before it saw our RST_STREAM
}

// Send returns the state after the server sends a frame of type t with flags fl on the stream,
// and false when the state does not allow it: the server answers streams (HEADERS and DATA on an
// open or half-closed (remote) stream) and may reset any stream it has not reset or seen reset.
func (s StreamState) Send(t Type, fl Flags) (StreamState, bool) {
	if t == TypeRSTStream {
		switch s {
		case StateOpen, StateHalfClosedLocal, StateHalfClosedRemote:
			return StateResetLocal, true
		}
		return s, false
	}
	if t != TypeData && t != TypeHeaders {
		return s, true // WINDOW_UPDATE, PRIORITY: no change
	}
	end := fl.Has(FlagEndStream)
	switch s {
	case StateOpen:
		if end {
			return StateHalfClosedLocal, true
		}
		return s, true
	case StateHalfClosedRemote:
		if end {
			return StateClosed, true
		}
		return s, true
	}
	return s, false
}
