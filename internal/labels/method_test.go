package labels

import "testing"

func TestMethod(t *testing.T) {
	for m, want := range map[string]string{"GET": "GET", "QUERY": "QUERY", "PATCH": "PATCH", "get": Other, "PROPFIND": Other, "": Other} {
		if got := Method(m); got != want {
			t.Errorf("Method(%q) = %q, want %q", m, got, want)
		}
	}
}
