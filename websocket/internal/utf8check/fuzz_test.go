package utf8check

import (
	"testing"
	"unicode/utf8"
)

// FuzzValidator: fed in pieces whose sizes come from cuts (4 bits each), Feed and Complete agree
// with utf8.Valid on the whole; Feed fails on the piece holding the first byte after which no
// valid text can follow, not earlier and not later; and a failure is sticky.
func FuzzValidator(f *testing.F) {
	f.Add([]byte("Hello-µ@ßöäüàá-UTF-8!!"), uint64(0x123))
	f.Add([]byte("\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xf4\x90\x80\x80edited"), uint64(0xc1))
	f.Fuzz(func(t *testing.T, data []byte, cuts uint64) {
		var v Validator
		fed, failed := 0, -1 // failed: the end of the piece on which Feed returned false
		for rest := data; len(rest) > 0; {
			k := min(len(rest), int(cuts&15)) // a piece of 0 to 15 bytes
			if cuts == 0 {
				k = len(rest)
			}
			cuts = cuts>>4 | cuts<<60
			ok := v.Feed(rest[:k])
			if !ok && failed < 0 {
				failed = fed + k
				if completable(data[:failed]) {
					t.Fatalf("%x: failed on a piece ending at %d, a prefix that can be completed", data, failed)
				}
				if fed > 0 && !completable(data[:fed]) {
					t.Fatalf("%x: did not fail on the piece ending at %d, a prefix that cannot be completed", data, fed)
				}
			}
			if failed >= 0 && ok {
				t.Fatalf("%x: Feed true after false", data)
			}
			fed += k
			rest = rest[k:]
		}
		want := utf8.Valid(data)
		if got := failed < 0 && v.Complete(); got != want {
			t.Fatalf("%x: valid %v, utf8.Valid %v", data, got, want)
		}
		if failed < 0 && !completable(data) {
			t.Fatalf("%x: never failed, but cannot be completed", data)
		}
		if got := valid(data); got != want {
			t.Fatalf("%x whole: valid %v, utf8.Valid %v", data, got, want)
		}
	})
}
