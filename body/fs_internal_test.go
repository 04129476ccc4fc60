package body

import (
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

func TestChooseCoding(t *testing.T) {
	all := [numCodings]bool{true, true, true}
	gzOnly := [numCodings]bool{true, false, true}
	none := [numCodings]bool{true, false, false}
	for _, tc := range []struct {
		ae    string
		avail [numCodings]bool
		want  coding
	}{
		{"", all, identity},
		{"br", all, brotli},
		{"gzip", all, gzipped},
		{"gzip, br", all, brotli},
		{"br, gzip", gzOnly, gzipped},
		{"br", gzOnly, identity},
		{"br, gzip", none, identity},
		{"br;q=0.8, gzip;q=0.9", all, gzipped},
		{"br;q=0.9, gzip;q=0.9", all, brotli},
		{"br;q=0.999, gzip;q=1.000", all, gzipped},
		{"br;q=0, gzip;q=0", all, identity},
		{"br;Q=0", all, identity},
		{"*", all, brotli},
		{"*;q=0.5, br;q=0.1", all, gzipped},
		{"*;q=0", all, identity},
		{"identity;q=0", all, identity},
		{"identity;q=0, *;q=0", all, identity},
		{"identity, br;q=0.5", all, identity},
		{"identity;q=0.5, br;q=0.5", all, brotli},
		{"br;q=0.5, *", all, gzipped},
		{"br;q=0.5, *", [numCodings]bool{true, true, false}, identity},
		{"br, br;q=0", all, brotli}, // the first element counts
		{"x-gzip", all, gzipped},
		{"GZIP", all, gzipped},
		{"br;level=4;q=0.2, gzip;q=0.1", all, brotli},
		{"br;q=", all, identity},
		{"br;q=2", all, identity},
		{"br;q=0.1234", all, identity},
		{"br;q=1.001", all, identity},
		{"br;q=-1", all, identity},
		{",,br,,", all, brotli},
		{"brotli, gzipx", all, identity},
	} {
		if got := chooseCoding(tc.ae)(tc.avail); got != tc.want {
			t.Errorf("chooseCoding(%q, %v) = %v, want %v", tc.ae, tc.avail, got, tc.want)
		}
	}
	// Field lines are one list, in order: the first element naming a coding counts.
	for _, tc := range []struct {
		lines []string
		want  coding
	}{
		{[]string{"identity", "br"}, brotli},
		{[]string{"br;q=0", "br, gzip"}, gzipped},
		{[]string{"*;q=0", "gzip"}, gzipped},
		{[]string{"", "gzip"}, gzipped},
	} {
		if got := chooseCoding(tc.lines...)(all); got != tc.want {
			t.Errorf("lines %q: %v, want %v", tc.lines, got, tc.want)
		}
	}
	ae := []byte(" gzip;q=0.5, br ; q=0.9, *;q=0")
	if n := testing.AllocsPerRun(100, func() { cw := newCodingWeights(); cw.add(ae); cw.choose(all) }); n != 0 {
		t.Errorf("choosing a coding: %v allocations, want 0", n)
	}
}

// chooseCoding returns the choice the field lines given make among the codings available.
func chooseCoding(lines ...string) func(available [numCodings]bool) coding {
	cw := newCodingWeights()
	for _, l := range lines {
		cw.add([]byte(l))
	}
	return cw.choose
}

func TestFSName(t *testing.T) {
	for name, want := range map[string]string{
		"":              "",
		"/":             ".",
		"app.js":        "app.js",
		"/app.js":       "app.js",
		"/css/site.css": "css/site.css",
		"/sub/":         "sub",
		"//sub//x":      "sub/x",
		"/./sub/./x":    "sub/x",
		"/.hidden":      ".hidden",
		"/a/..b/c..":    "a/..b/c..",
		"/../x":         "!",
		"/sub/../x":     "!",
		"/..":           "!",
		"/a\\b":         "!",
		"/a\x00b":       "!",
		"..":            "!",
		"sub/..":        "!",
	} {
		got, ok := fsName(name)
		if !ok {
			got = "!"
		}
		if name == "" {
			want = "."
		}
		if got != want {
			t.Errorf("fsName(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestFSStoreBound: an FS keeps at most maxFSEntries names, the one just described among them.
func TestFSStoreBound(t *testing.T) {
	s := NewFS(fstest.MapFS{}, FSOptions{})
	for i := range maxFSEntries + 100 {
		e := &fsEntry{name: strconv.Itoa(i)}
		s.store(e)
		if s.entries[e.name] != e {
			t.Fatalf("%s was not kept", e.name)
		}
	}
	if len(s.entries) != maxFSEntries {
		t.Fatalf("%d entries, want %d", len(s.entries), maxFSEntries)
	}
	s.store(&fsEntry{name: "5"}) // already there or not, still within the bound
	if len(s.entries) != maxFSEntries {
		t.Fatalf("%d entries after storing again, want %d", len(s.entries), maxFSEntries)
	}
}

// FuzzChooseCoding: any Accept-Encoding value yields, without panicking, a coding the file has,
// and a compressed one only if the value names it or has a "*".
func FuzzChooseCoding(f *testing.F) {
	for _, s := range []string{"", "gzip, deflate, br, zstd", "br;q=0.5, *", "identity;q=0, *;q=0", "x-gzip;q=1.000",
		"br;q=0.", ";;,,q=", "*;q=0.001, gzip;q=0"} {
		f.Add(s, true, true)
	}
	f.Fuzz(func(t *testing.T, ae string, br, gz bool) {
		avail := [numCodings]bool{true, br, gz}
		k := chooseCoding(ae)(avail)
		if !avail[k] {
			t.Fatalf("chooseCoding(%q, %v) = %v, which the file does not have", ae, avail, k)
		}
		lower := strings.ToLower(ae)
		if k != identity && !strings.Contains(lower, codings[k].name) && !strings.Contains(ae, "*") {
			t.Fatalf("chooseCoding(%q) = %v, which it does not name", ae, k)
		}
	})
}
