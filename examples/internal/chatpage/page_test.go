package chatpage

import (
	"strconv"
	"strings"
	"testing"
)

// element returns the content of the page's only element of the given tag.
func element(t *testing.T, tag string) string {
	t.Helper()
	open, end := "<"+tag+">", "</"+tag+">"
	if strings.Count(page, open) != 1 {
		t.Fatalf("%d %s elements", strings.Count(page, open), open)
	}
	_, rest, _ := strings.Cut(page, open)
	content, _, ok := strings.Cut(rest, end)
	if !ok {
		t.Fatalf("no %s", end)
	}
	return content
}

// TestPolicyAllowsThePage: the policy allows exactly the page's style and script, which the
// browser hashes as served, and the limits are filled in.
func TestPolicyAllowsThePage(t *testing.T) {
	style, script := element(t, "style"), element(t, "script")
	for _, want := range []string{"style-src '" + hash(style) + "'", "script-src '" + hash(script) + "'", "default-src 'none'"} {
		if !strings.Contains(policy, want) {
			t.Errorf("policy %q lacks %q", policy, want)
		}
	}
	if strings.Contains(page, "{{") {
		t.Error("a placeholder is left in the page")
	}
	limits := "{textChars: " + strconv.Itoa(MaxTextChars) + ", textBytes: " + strconv.Itoa(MaxTextBytes) +
		", nameChars: " + strconv.Itoa(MaxNameChars) + "}"
	if !strings.Contains(script, limits) {
		t.Errorf("the script lacks %s", limits)
	}
}
