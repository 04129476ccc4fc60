package http1

import (
	"math/rand/v2"
	"net/textproto"
	"slices"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/serve"
)

// A fieldOp is one call a handler makes on the response's fields.
type fieldOp struct {
	op          byte // 's' SetHeader, 'a' AddHeader, 'd' DelHeader
	name, value string
}

// fieldModel is what the response's fields should be: lines in the order set, names compared
// without regard to case.
type fieldModel [][2]string

func (m fieldModel) apply(o fieldOp) fieldModel {
	if o.op != 'a' {
		m = slices.DeleteFunc(m, func(l [2]string) bool { return strings.EqualFold(l[0], o.name) })
	}
	if o.op != 'd' {
		m = append(m, [2]string{o.name, o.value})
	}
	return m
}

func (m fieldModel) first(name string) string {
	for _, l := range m {
		if strings.EqualFold(l[0], name) {
			return l[1]
		}
	}
	return ""
}

// TestResponseFieldsFollowTheirModel runs random sequences of SetHeader, AddHeader and
// DelHeader over names that differ only in case or share a bit of the field set's name
// filter ("X-A" and "W-Ab"), on one connection so that each Ctx is reused, and checks
// ResponseHeader after every call and the fields the client receives against the model.
func TestResponseFieldsFollowTheirModel(t *testing.T) {
	names := []string{"X-A", "x-a", "W-Ab", "w-AB", "X-Other", "Set-Cookie", "Vary", "x-other"}
	if serve.NameBit("X-A") != serve.NameBit("W-Ab") {
		t.Fatal("the test's colliding names no longer collide")
	}
	scripts := make(chan []fieldOp, 1)
	_, addr := startServer(t, func(c *serve.Ctx) {
		var m fieldModel
		for i, o := range <-scripts {
			switch o.op {
			case 's':
				c.SetHeader(o.name, o.value)
			case 'a':
				c.AddHeader(o.name, o.value)
			case 'd':
				c.DelHeader(o.name)
			}
			m = m.apply(o)
			for _, n := range names {
				if got, want := c.ResponseHeader(n), m.first(n); got != want {
					t.Errorf("after op %d (%c %s): ResponseHeader(%q) = %q, want %q", i, o.op, o.name, n, got, want)
				}
			}
		}
		c.WriteString("ok")
	}, serve.Options{})
	rc := dial(t, addr)
	rng := rand.New(rand.NewPCG(1, 2))
	for req := range 300 {
		var script []fieldOp
		var m fieldModel
		for i := range rng.IntN(24) {
			o := fieldOp{op: "ssaad"[rng.IntN(5)], name: names[rng.IntN(len(names))]}
			// Some values past 127 bytes, whose length takes two bytes in the field set.
			o.value = strings.Repeat("v", rng.IntN(40)+150*rng.IntN(2)) + string(rune('a'+i%26))
			script = append(script, o)
			m = m.apply(o)
		}
		scripts <- script
		rc.Send("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
		resp, body := rc.Response("GET")
		if resp.StatusCode != 200 || body != "ok" {
			t.Fatalf("request %d: %d %q", req, resp.StatusCode, body)
		}
		for _, n := range names {
			var want []string
			for _, l := range m {
				if strings.EqualFold(l[0], n) {
					want = append(want, l[1])
				}
			}
			if got := resp.Header[textproto.CanonicalMIMEHeaderKey(n)]; !slices.Equal(got, want) {
				t.Fatalf("request %d, script %v: field %s = %q, want %q", req, script, n, got, want)
			}
		}
	}
}

// TestCheckValueEveryByte: a value is refused exactly when a byte of it is neither field
// content nor HTAB, wherever the byte is in values of every length around the word size
// (syntax.IsFieldValue's word test is tested alone: TestHasCtlOrDel).
func TestCheckValueEveryByte(t *testing.T) {
	refused := func(v string) (r bool) {
		defer func() { r = recover() != nil }()
		serve.CheckValue("X", v)
		return false
	}
	for n := 1; n <= 20; n++ {
		for pos := range n {
			for b := range 256 {
				v := []byte(strings.Repeat("v", n))
				v[pos] = byte(b)
				bad := b < 0x20 && b != '\t' || b == 0x7f
				if got := refused(string(v)); got != bad {
					t.Fatalf("checkValue(%q) refused: %v, want %v", v, got, bad)
				}
			}
		}
	}
}
