package labels

import (
	"strconv"
	"testing"
)

func TestStatus(t *testing.T) {
	for _, code := range []int{0, 200, 404, 503, 599, 600, 1000, -1} {
		if got := Status(code); got != strconv.Itoa(code) {
			t.Errorf("Status(%d) = %q", code, got)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = Status(503) }); n != 0 {
		t.Errorf("Status(503) allocates %v times", n)
	}
}
