package labels

import "testing"

func TestMethod(t *testing.T) {
	for m, want := range map[string]string{"GET": "GET", "QUERY": "QUERY", "PATCH": "PATCH", "get": Other, "PROPFIND": Other, "": Other} {
		if got := Method(m); got != want {
			t.Errorf("Method(%q) = %q, want %q", m, got, want)
		}
	}
}

// TestMethodIndex: every label's index names it again, and unknown methods share Other's.
func TestMethodIndex(t *testing.T) {
	seen := map[int]bool{}
	for i := range Methods {
		name := MethodName(i)
		if got := MethodIndex(name); got != i || seen[got] {
			t.Errorf("MethodIndex(%q) = %d, want %d", name, got, i)
		}
		seen[i] = true
	}
	if MethodName(MethodIndex("PROPFIND")) != Other || MethodName(MethodIndex("get")) != Other {
		t.Error("an unknown method is not Other")
	}
}
