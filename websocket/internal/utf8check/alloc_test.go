//go:build !race

package utf8check

import "testing"

// TestFeedAllocatesNothing: validating a message in pieces allocates nothing.
func TestFeedAllocatesNothing(t *testing.T) {
	pieces := [][]byte{[]byte("Hello-µ@ßö"), []byte("\xe2\x82"), []byte("\xac 日本語 𝄞"), []byte("........ascii.....")}
	var v Validator
	if n := testing.AllocsPerRun(100, func() {
		v.Reset()
		for _, p := range pieces {
			v.Feed(p)
		}
		if !v.Complete() {
			panic("invalid")
		}
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
