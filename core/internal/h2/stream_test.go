package h2

import (
	"errors"
	"testing"
)

// TestStreamRecv: RFC 9113 §5.1, a frame of each kind arriving in each state.
func TestStreamRecv(t *testing.T) {
	const (
		ok     = 0
		conn   = 1
		stream = 2
	)
	type frame struct {
		t  Type
		fl Flags
	}
	var (
		headers    = frame{TypeHeaders, FlagEndHeaders}
		headersEnd = frame{TypeHeaders, FlagEndHeaders | FlagEndStream}
		data       = frame{TypeData, 0}
		dataEnd    = frame{TypeData, FlagEndStream}
		rst        = frame{TypeRSTStream, 0}
		window     = frame{TypeWindowUpdate, 0}
		priority   = frame{TypePriority, 0}
	)
	for _, tc := range []struct {
		from StreamState
		f    frame
		to   StreamState
		err  int
		code ErrCode
	}{
		{StateIdle, headers, StateOpen, ok, 0},
		{StateIdle, headersEnd, StateHalfClosedRemote, ok, 0},
		{StateIdle, priority, StateIdle, ok, 0},
		{StateIdle, data, StateIdle, conn, ProtocolError},
		{StateIdle, rst, StateIdle, conn, ProtocolError},
		{StateIdle, window, StateIdle, conn, ProtocolError},
		{StateOpen, data, StateOpen, ok, 0},
		{StateOpen, dataEnd, StateHalfClosedRemote, ok, 0},
		{StateOpen, headersEnd, StateHalfClosedRemote, ok, 0}, // trailers
		{StateOpen, headers, StateOpen, stream, ProtocolError},
		{StateOpen, rst, StateResetByPeer, ok, 0},
		{StateOpen, window, StateOpen, ok, 0},
		{StateHalfClosedLocal, dataEnd, StateClosed, ok, 0},
		{StateHalfClosedLocal, data, StateHalfClosedLocal, ok, 0},
		{StateHalfClosedLocal, rst, StateResetByPeer, ok, 0},
		{StateHalfClosedRemote, data, StateHalfClosedRemote, stream, StreamClosed},
		{StateHalfClosedRemote, headersEnd, StateHalfClosedRemote, stream, StreamClosed},
		{StateHalfClosedRemote, window, StateHalfClosedRemote, ok, 0},
		{StateHalfClosedRemote, priority, StateHalfClosedRemote, ok, 0},
		{StateHalfClosedRemote, rst, StateResetByPeer, ok, 0},
		{StateClosed, data, StateClosed, conn, StreamClosed},
		{StateClosed, headers, StateClosed, conn, StreamClosed},
		{StateClosed, window, StateClosed, ok, 0},
		{StateClosed, rst, StateClosed, ok, 0},
		{StateResetByPeer, data, StateResetByPeer, stream, StreamClosed},
		{StateResetByPeer, window, StateResetByPeer, stream, StreamClosed},
		{StateResetByPeer, priority, StateResetByPeer, ok, 0},
		{StateResetLocal, data, StateResetLocal, ok, 0},
		{StateResetLocal, headers, StateResetLocal, ok, 0},
		{StateResetLocal, rst, StateResetLocal, ok, 0},
	} {
		to, err := tc.from.Recv(7, tc.f.t, tc.f.fl)
		var ce *ConnError
		var se *StreamError
		switch {
		case to != tc.to:
			t.Errorf("%v, %v received: %v, want %v", tc.from, tc.f.t, to, tc.to)
		case tc.err == ok && err != nil:
			t.Errorf("%v, %v received: %v", tc.from, tc.f.t, err)
		case tc.err == conn && (!errors.As(err, &ce) || ce.Code != tc.code):
			t.Errorf("%v, %v received: %v, want a connection error %v", tc.from, tc.f.t, err, tc.code)
		case tc.err == stream && (!errors.As(err, &se) || se.Code != tc.code || se.StreamID != 7):
			t.Errorf("%v, %v received: %v, want a stream error %v", tc.from, tc.f.t, err, tc.code)
		}
	}
}

// TestStreamSend: what the server may send in each state, and where it leads.
func TestStreamSend(t *testing.T) {
	for _, tc := range []struct {
		from StreamState
		t    Type
		fl   Flags
		to   StreamState
		ok   bool
	}{
		{StateOpen, TypeHeaders, FlagEndHeaders, StateOpen, true},
		{StateOpen, TypeData, FlagEndStream, StateHalfClosedLocal, true},
		{StateHalfClosedRemote, TypeHeaders, FlagEndHeaders | FlagEndStream, StateClosed, true},
		{StateHalfClosedRemote, TypeData, 0, StateHalfClosedRemote, true},
		{StateHalfClosedRemote, TypeRSTStream, 0, StateResetLocal, true},
		{StateOpen, TypeWindowUpdate, 0, StateOpen, true},
		{StateIdle, TypeHeaders, 0, StateIdle, false},
		{StateIdle, TypeRSTStream, 0, StateIdle, false},
		{StateHalfClosedLocal, TypeData, 0, StateHalfClosedLocal, false},
		{StateClosed, TypeData, 0, StateClosed, false},
		{StateResetByPeer, TypeRSTStream, 0, StateResetByPeer, false},
		{StateResetLocal, TypeRSTStream, 0, StateResetLocal, false},
	} {
		if to, ok := tc.from.Send(tc.t, tc.fl); to != tc.to || ok != tc.ok {
			t.Errorf("%v, %v sent: %v %v, want %v %v", tc.from, tc.t, to, ok, tc.to, tc.ok)
		}
	}
}
