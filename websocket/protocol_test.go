package websocket

import (
	"errors"
	"testing"

	"github.com/dwellhttp/dwell/core"
)

// TestOneErrClosed: a closed WebSocket and a closed HTTP connection report the same error,
// whichever package's name the caller compares with.
func TestOneErrClosed(t *testing.T) {
	if !errors.Is(ErrClosed, core.ErrClosed) || !errors.Is(core.ErrClosed, ErrClosed) {
		t.Fatal("errors.Is does not hold both ways between websocket.ErrClosed and core.ErrClosed")
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
