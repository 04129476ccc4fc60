package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLogReopensWorstText: a message's text of maxText bytes that JSON escapes at its worst
// (each "<" as \u003c, a byte of no UTF-8 as \ufffd) is read back when the log is opened
// again: one accepted message must not keep the server from restarting.
func TestLogReopensWorstText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "feed.jsonl")
	l, err := openLog(path, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{strings.Repeat("<", maxText), strings.Repeat("\xff", maxText)} {
		if _, err := l.publish(text); err != nil {
			t.Fatal(err)
		}
	}
	l.close()
	l, err = openLog(path, 1000)
	if err != nil {
		t.Fatalf("opening the log again: %v", err)
	}
	defer l.close()
	if n := len(l.msgs); n != 2 {
		t.Fatalf("%d messages read back, want 2", n)
	}
}
