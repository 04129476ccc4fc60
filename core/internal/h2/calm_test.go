package h2

import "testing"

// TestCalm: frames that carry no request spend the allowance, and past it Take refuses; what
// carries a request is free; streams, DATA moved, the clock and a PING after the server's DATA
// give back, never past the whole allowance.
func TestCalm(t *testing.T) {
	settings := Header{Type: TypeSettings}
	ping := Header{Type: TypePing, Length: 8}
	var a Calm
	var now int64 // the loop's clock
	a.Start(now)
	spend := func() int { // takes SETTINGS until refused; how many were taken
		n := 0
		for a.Take(settings, now) {
			n++
		}
		return n
	}
	if n := spend(); n != CalmMax {
		t.Fatalf("a new connection took %d idle frames, want %d", n, CalmMax)
	}
	if !a.Take(Header{Type: TypeData, Length: 1}, 0) || !a.Take(Header{Type: TypeHeaders, Flags: FlagEndHeaders}, 0) {
		t.Fatal("a frame that carries something was refused")
	}
	a.Give(CalmPerStream)
	if n := spend(); n != CalmPerStream-1 { // the refused frame counted against what came back
		t.Fatalf("a stream gave back %d, want %d", n+1, CalmPerStream)
	}
	a.Moved(3 * CalmBytes)
	if n := spend(); n != 3-1 {
		t.Fatalf("%d bytes of DATA gave back %d, want 3", 3*CalmBytes, n+1)
	}
	a.SentData(1)
	if !a.Take(ping, 0) {
		t.Fatal("a PING after the server's DATA was refused")
	}
	if a.Take(ping, 0) {
		t.Fatal("a second PING was free")
	}
	now += int64(5 * CalmPeriod)
	if n := spend(); n != 5-2 { // the two refused frames before counted against it
		t.Fatalf("five periods gave back %d, want 5", n+2)
	}
	a.Give(10 * CalmMax)
	if n := spend(); n != CalmMax {
		t.Fatalf("the allowance grew to %d, past %d", n, CalmMax)
	}
}
