package websocket

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dwellhttp/dwell/core"
)

// TestOneErrClosed: a closed WebSocket and a closed HTTP connection report the same error,
// whichever package's name the caller compares with.
func TestOneErrClosed(t *testing.T) {
	// A wrapped error from either package, as a caller sees it, matches both names.
	for _, err := range []error{fmt.Errorf("read: %w", ErrClosed), fmt.Errorf("write: %w", core.ErrClosed)} {
		if !errors.Is(err, ErrClosed) || !errors.Is(err, core.ErrClosed) {
			t.Errorf("%v: errors.Is does not hold for both websocket.ErrClosed and core.ErrClosed", err)
		}
	}
}

// TestProtocolOffConn: the calls the loop makes on a handed-over connection are not the
// application's: a Conn is not a core.Protocol, its protocol side is.
func TestProtocolOffConn(t *testing.T) {
	var c any = &Conn{}
	if _, ok := c.(core.Protocol); ok {
		t.Fatal("*Conn exports core.Protocol's methods")
	}
	var _ core.Protocol = (*protocol)(nil)
}
