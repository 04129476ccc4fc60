package h2

import "strconv"

// An ErrCode is an HTTP/2 error code (RFC 9113 §7), carried by RST_STREAM and GOAWAY.
type ErrCode uint32

// The error codes of RFC 9113 §7.
const (
	NoError            ErrCode = 0x0
	ProtocolError      ErrCode = 0x1
	InternalError      ErrCode = 0x2
	FlowControlError   ErrCode = 0x3
	SettingsTimeout    ErrCode = 0x4
	StreamClosed       ErrCode = 0x5
	FrameSizeError     ErrCode = 0x6
	RefusedStream      ErrCode = 0x7
	Cancel             ErrCode = 0x8
	CompressionError   ErrCode = 0x9
	ConnectError       ErrCode = 0xa
	EnhanceYourCalm    ErrCode = 0xb
	InadequateSecurity ErrCode = 0xc
	HTTP11Required     ErrCode = 0xd
)

var errCodeNames = [...]string{
	NoError: "NO_ERROR", ProtocolError: "PROTOCOL_ERROR", InternalError: "INTERNAL_ERROR",
	FlowControlError: "FLOW_CONTROL_ERROR", SettingsTimeout: "SETTINGS_TIMEOUT",
	StreamClosed: "STREAM_CLOSED", FrameSizeError: "FRAME_SIZE_ERROR",
	RefusedStream: "REFUSED_STREAM", Cancel: "CANCEL", CompressionError: "COMPRESSION_ERROR",
	ConnectError: "CONNECT_ERROR", EnhanceYourCalm: "ENHANCE_YOUR_CALM",
	InadequateSecurity: "INADEQUATE_SECURITY", HTTP11Required: "HTTP_1_1_REQUIRED",
}

// String returns the code's name in RFC 9113, or its number for an unknown one (which §7 says
// to treat as INTERNAL_ERROR, but which is still shown as received).
func (c ErrCode) String() string {
	if int(c) < len(errCodeNames) {
		return errCodeNames[c]
	}
	return "unknown error code 0x" + strconv.FormatUint(uint64(c), 16)
}

// A ConnError is an error of the whole connection (RFC 9113 §5.4.1): the server sends GOAWAY
// with Code and closes it.
type ConnError struct {
	Code   ErrCode
	Reason string // what was wrong, for the log and GOAWAY's debug data
}

func (e *ConnError) Error() string {
	return "http2: connection error " + e.Code.String() + ": " + e.Reason
}

// A StreamError is an error of one stream (RFC 9113 §5.4.2): the server sends RST_STREAM with
// Code on StreamID, and the connection goes on.
type StreamError struct {
	StreamID uint32
	Code     ErrCode
	Reason   string
}

func (e *StreamError) Error() string {
	return "http2: stream " + strconv.FormatUint(uint64(e.StreamID), 10) + " error " + e.Code.String() + ": " + e.Reason
}

func connErr(code ErrCode, reason string) error { return &ConnError{Code: code, Reason: reason} }

func streamErr(id uint32, code ErrCode, reason string) error {
	return &StreamError{StreamID: id, Code: code, Reason: reason}
}
