package testclient

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// FixedStackStart is the GODEBUG setting under which new goroutines start with 2 KiB stacks.
const FixedStackStart = "adaptivestackstart=0"

// InProcessOfItsOwn reports whether test name is running in a process of its own with the
// runtime's fixed 2 KiB stack start; if not, it runs the test so and reports false. Go starts
// new goroutines with stacks sized to the average its last collection found (GODEBUG
// adaptivestackstart), so in a process shared with other tests a footprint would depend on the
// tests that ran before: it is dwell's own that is measured.
func InProcessOfItsOwn(t *testing.T, name string) bool {
	t.Helper()
	if strings.Contains(os.Getenv("GODEBUG"), FixedStackStart) {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), "GODEBUG="+strings.TrimPrefix(os.Getenv("GODEBUG")+","+FixedStackStart, ","))
	out, err := cmd.CombinedOutput()
	t.Logf("in a process of its own:\n%s", out)
	if err != nil {
		t.Fatal(err)
	}
	return false
}
