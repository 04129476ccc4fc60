package h2

// A SettingID names a setting (RFC 9113 §6.5.2; RFC 8441 §3 for ENABLE_CONNECT_PROTOCOL).
type SettingID uint16

// The settings a server acts on. Others are ignored, as §6.5.2 asks.
const (
	SettingHeaderTableSize       SettingID = 0x1
	SettingEnablePush            SettingID = 0x2
	SettingMaxConcurrentStreams  SettingID = 0x3
	SettingInitialWindowSize     SettingID = 0x4
	SettingMaxFrameSize          SettingID = 0x5
	SettingMaxHeaderListSize     SettingID = 0x6
	SettingEnableConnectProtocol SettingID = 0x8
)

// A Setting is one parameter of a SETTINGS frame.
type Setting struct {
	ID    SettingID
	Value uint32
}

// Check returns the connection error a setting's value is (RFC 9113 §6.5.2), or nil.
func (s Setting) Check() error {
	switch s.ID {
	case SettingEnablePush, SettingEnableConnectProtocol:
		if s.Value > 1 {
			return connErr(ProtocolError, "SETTINGS_ENABLE_PUSH or SETTINGS_ENABLE_CONNECT_PROTOCOL other than 0 or 1")
		}
	case SettingInitialWindowSize:
		if s.Value > MaxWindow {
			return connErr(FlowControlError, "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1")
		}
	case SettingMaxFrameSize:
		if s.Value < MinMaxFrameSize || s.Value > MaxMaxFrameSize {
			return connErr(ProtocolError, "SETTINGS_MAX_FRAME_SIZE outside 2^14 to 2^24-1")
		}
	}
	return nil
}

// Settings calls f with each setting of a SETTINGS frame's payload, in order (a later value of
// a setting replaces an earlier one: §6.5.3), after checking it; it stops at the first error,
// f's or a setting's.
func Settings(p []byte, f func(Setting) error) error {
	for ; len(p) >= 6; p = p[6:] {
		s := Setting{ID: SettingID(p[0])<<8 | SettingID(p[1]), Value: be32(p[2:])}
		if err := s.Check(); err != nil {
			return err
		}
		if err := f(s); err != nil {
			return err
		}
	}
	return nil
}
