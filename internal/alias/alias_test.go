package alias

import (
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

func TestStringAndBytesShareMemory(t *testing.T) {
	b := []byte("hello")
	if s := String(b); s != "hello" || unsafe.StringData(s) != &b[0] {
		t.Fatalf("String: %q, not b's bytes", s)
	}
	s := strings.Repeat("ab", 3)
	if v := Bytes(s); string(v) != s || &v[0] != unsafe.StringData(s) || len(v) != len(s) {
		t.Fatalf("Bytes: %q, not s's bytes", v)
	}
	if String(nil) != "" || len(Bytes("")) != 0 {
		t.Fatal("empty views are not empty")
	}
}

// Two struct types with the same fields, as router's parameters and httprouter's are.
type pairA struct{ K, V string }
type pairB struct{ K, V string }

var _ = pairA(pairB{}) // the conversion compiles: the same fields in the same order

func TestSlice(t *testing.T) {
	bs := []pairB{{"a", "1"}, {"b", "2"}}
	as := Slice[pairA](bs)
	if len(as) != 2 || as[1] != (pairA{"b", "2"}) || &as[0].K != &bs[0].K {
		t.Fatalf("Slice: %v, not a view of %v", as, bs)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Slice between types of different sizes did not panic")
		}
	}()
	Slice[int32]([]int64{1})
}

type inner struct{ n int }
type outer struct {
	in   inner // first: Outer's condition
	name string
}

func TestOuter(t *testing.T) {
	if unsafe.Offsetof(outer{}.in) != 0 {
		t.Fatal("the test's own layout: in is not first")
	}
	o := &outer{in: inner{n: 1}, name: "x"}
	if got := Outer[outer](&o.in); got != o || got.name != "x" || got.in.n != 1 {
		t.Fatal("Outer did not find the struct of its first field")
	}
}

func TestWithin(t *testing.T) {
	base := make([]byte, 16, 32)
	for _, tc := range []struct {
		b    []byte
		want bool
	}{
		{base[0:1], true}, {base[15:16], true}, {base[4:4], true},
		{base[16:20], false}, // past the length, in the capacity
		{make([]byte, 4), false},
		{nil, false},
	} {
		if got := Within(tc.b, base); got != tc.want {
			t.Errorf("Within(%p len %d) = %v, want %v", unsafe.SliceData(tc.b), len(tc.b), got, tc.want)
		}
	}
}

func TestStringAddr(t *testing.T) {
	s := strings.Repeat("route", 2)
	if StringAddr(s) != StringAddr(s[:3]) || StringAddr(s) == StringAddr(strings.Clone(s)) {
		t.Fatal("StringAddr does not tell a string's bytes from a copy's")
	}
}

func TestSliceAt(t *testing.T) {
	buf := make([]byte, 64)
	buf[63] = 7
	p := &buf[:1][0]
	if got := SliceAt(p, 64); len(got) != 64 || &got[0] != &buf[0] || got[63] != 7 {
		t.Fatal("SliceAt is not the buffer")
	}
}

// box is an object holding a string header and the bytes it points at, as the request id's is.
type box struct {
	s string
	b [64]byte
}

// TestBoxString: the interface BoxString makes is a string to a type assertion, to reflect and
// to interface comparison, its string is b's bytes without a copy, and it survives a GC with
// nothing else holding its box.
func TestBoxString(t *testing.T) {
	const want = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0"
	bx := new(box)
	copy(bx.b[:], want)
	v := BoxString(&bx.s, bx.b[:len(want)])
	s, ok := v.(string)
	if !ok || s != want {
		t.Fatalf("v.(string) is %q, %v", s, ok)
	}
	if unsafe.StringData(s) != &bx.b[0] || bx.s != want {
		t.Fatal("the string is not the box's bytes")
	}
	if got := reflect.TypeOf(v); got != reflect.TypeFor[string]() {
		t.Fatalf("reflect sees a %v", got)
	}
	if got := reflect.ValueOf(v).String(); got != want {
		t.Fatalf("reflect sees %q", got)
	}
	if v != any(want) {
		t.Fatal("the interface is not equal to one that holds the same string")
	}
	// Only v holds the box now: were it not enough, the GC would free the box, and boxes made
	// after it would take its place.
	bx, s = nil, ""
	runtime.GC()
	for range 1000 {
		b := new(box)
		copy(b.b[:], strings.Repeat("x", len(b.b)))
		keep = append(keep, b)
	}
	keep = nil
	if v.(string) != want {
		t.Fatalf("after a GC, the string is %q", v)
	}
}

// keep makes the boxes TestBoxString allocates escape, so that they take the heap's free slots.
var keep []*box

type asInner struct{ n int }
type asWrapper struct{ in asInner }

func TestAs(t *testing.T) {
	in := &asInner{n: 7}
	w := As[*asWrapper](in)
	if w.in.n != 7 || As[*asInner](w) != in {
		t.Fatal("As: the pointer is not the same")
	}
	if As[*asWrapper]((*asInner)(nil)) != nil {
		t.Fatal("As: nil is not nil")
	}
	var got int
	f := As[func(*asInner)](func(w *asWrapper) { got = w.in.n })
	f(in)
	if got != 7 {
		t.Fatalf("As: a function called through another signature saw %d", got)
	}
	if As[pairB](pairA{"k", "v"}) != (pairB{"k", "v"}) {
		t.Fatal("As: a struct's fields moved")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("As between sizes that differ did not panic")
		}
	}()
	As[int32](int64(1))
}
