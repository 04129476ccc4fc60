package h2

import (
	"errors"
	"testing"
)

func TestSendWindow(t *testing.T) {
	w := SendWindow(DefaultWindow)
	if n := w.Allows(100000); n != DefaultWindow {
		t.Fatalf("Allows: %d", n)
	}
	w.Take(DefaultWindow)
	if n := w.Allows(1); n != 0 {
		t.Fatalf("an empty window allows %d", n)
	}
	// SETTINGS_INITIAL_WINDOW_SIZE down from 65535 to 1000: the window goes negative (§6.9.2).
	if err := w.Resize(DefaultWindow, 1000); err != nil || w != -64535 || w.Allows(1) != 0 {
		t.Fatalf("resized to %d, %v", w, err)
	}
	if err := w.Update(3, 64536); err != nil || w.Allows(10) != 1 {
		t.Fatalf("after an update: %d, %v", w, err)
	}
	var se *StreamError
	if err := w.Update(3, MaxWindow); !errors.As(err, &se) || se.Code != FlowControlError || w != 1 {
		t.Fatalf("past 2^31-1: %v, window %d", err, w)
	}
	c := SendWindow(MaxWindow)
	var ce *ConnError
	if err := c.Update(0, 1); !errors.As(err, &ce) || ce.Code != FlowControlError {
		t.Fatalf("the connection's past 2^31-1: %v", err)
	}
	if err := c.Resize(0, 1); !errors.As(err, &ce) {
		t.Fatalf("a resize past 2^31-1: %v", err)
	}
}

// TestRecvWindow: DATA past the window is refused; consumed bytes go back in a WINDOW_UPDATE
// once half the window is consumed, never those received and not consumed.
func TestRecvWindow(t *testing.T) {
	w := NewRecvWindow(1000)
	if err := w.Receive(1, 1000); err != nil {
		t.Fatal(err)
	}
	var se *StreamError
	if err := w.Receive(1, 1); !errors.As(err, &se) || se.Code != FlowControlError {
		t.Fatalf("a byte past the window: %v", err)
	}
	if inc := w.Consume(499); inc != 0 {
		t.Fatalf("499 of 1000 consumed: an update of %d", inc)
	}
	if inc := w.Consume(1); inc != 500 {
		t.Fatalf("500 of 1000 consumed: an update of %d, want 500", inc)
	}
	if err := w.Receive(1, 500); err != nil {
		t.Fatalf("the 500 given back: %v", err)
	}
	if err := w.Receive(1, 1); err == nil {
		t.Fatal("a byte past the window given back")
	}
	c := NewRecvWindow(10)
	var ce *ConnError
	if err := c.Receive(0, 11); !errors.As(err, &ce) {
		t.Fatalf("the connection's window: %v", err)
	}
}
