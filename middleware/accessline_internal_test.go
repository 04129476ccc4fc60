package middleware

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
)

// FuzzAccessLine: the line the access log writes itself is the line slog's JSONHandler writes
// for the same record, byte for byte, whatever the request's strings hold — quotes,
// backslashes, control characters, invalid UTF-8, U+2028 — and whichever fields are present.
func FuzzAccessLine(f *testing.F) {
	f.Add("GET", []byte("/hello"), "/hello", "0b5e1c2a-7c9d-4f55-a7f3-5b8e3c1d2f10", "", "", 200, int64(11), int64(15300), uint8(0), int64(0))
	f.Add("POST", []byte("/a b/\"q\"\\\n\t\r\x00\x1f\x7f"), "", "", "dwell: handler panicked: boom", "curl/8.5", 500, int64(-1), int64(1), uint8(LogUserAgent|LogRequestBytes), int64(42))
	f.Add("QUERY", []byte("/caf\xc3\xa9/\xff\xfe/\xe2\x80\xa8\xe2\x80\xa9/<&>"), "/todos/:id", "id\u2028", "gone\x01", "ref\xe2\x80", 404, int64(4), int64(-3), uint8(0xff), int64(-1))
	f.Add("GET", []byte(""), "(not found)", "", "", "", 0, int64(0), int64(0), uint8(LogRemoteAddr|LogTraceID|LogHost), int64(7))
	f.Fuzz(func(t *testing.T, method string, path []byte, route, id, errText, text string, status int, n, dur int64, fields uint8, reqBytes int64) {
		e := &logEntry{method: method, pathBytes: path, route: route, id: id, fields: LogField(fields)}
		x := &e.extra
		x.requestBytes = reqBytes
		if e.fields&LogUserAgent != 0 {
			x.userAgent = text
		}
		if e.fields&LogReferer != 0 {
			x.referer = text + "/r"
		}
		if e.fields&LogHost != 0 {
			x.host = "h" + text
		}
		if e.fields&LogTraceID != 0 {
			x.traceID = id + text
		}
		if e.fields&LogRemoteAddr != 0 {
			x.remote = netip.AddrFrom16([16]byte{0: 0x20, 1: 0x01, 15: byte(n)}).WithZone(string(rune('a' + fields%26)))
			if fields%2 == 0 {
				x.remote = netip.AddrFrom4([4]byte{192, 0, 2, byte(n)})
			}
		}
		at := time.Date(2026, 12, 1, 16, 0, 25, int(dur%1e9+1e9)%1e9, time.UTC)
		d := core.Done{Status: status, Bytes: n, Duration: time.Duration(dur), Time: at}
		if errText != "" {
			d.Err = errors.New(errText)
		}
		var want bytes.Buffer
		e.log(slog.NewJSONHandler(&want, nil), d)
		if got := e.appendLine(nil, new(stampCache), d); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("line\n%s\nslog's\n%s", got, want.Bytes())
		}
	})
}

// FuzzStamp: the stamp cache formats a time as time.RFC3339Nano does, in any zone, in the second
// it holds and in another.
func FuzzStamp(f *testing.F) {
	f.Add(int64(1796140825123456789), 0, int64(0))
	f.Add(int64(1796140825000000000), 3600, int64(1))
	f.Add(int64(1796140825100000000), -34200, int64(999999999))
	f.Add(int64(-1), 45*60, int64(1e9))
	f.Fuzz(func(t *testing.T, unixNano int64, offset int, step int64) {
		loc := time.UTC
		if offset %= 18 * 3600; offset != 0 {
			loc = time.FixedZone("", offset)
		}
		var c stampCache
		for _, at := range []time.Time{time.Unix(0, unixNano).In(loc), time.Unix(0, unixNano+step%2e9).In(loc)} {
			if y := at.Year(); y < 0 || y > 9999 {
				return // RFC 3339 has four-digit years; slog logs an error for others
			}
			want := at.AppendFormat(nil, time.RFC3339Nano)
			if got := c.append(nil, at); !bytes.Equal(got, want) {
				t.Fatalf("%s, want %s", got, want)
			}
		}
	})
}

// BenchmarkAccessLine: a line the access log formats into the batch itself, and the same line
// through slog's JSONHandler, both into a buffer that discards.
func BenchmarkAccessLine(b *testing.B) {
	h := NewLogHandler(io.Discard, nil)
	e := &logEntry{direct: h, method: "GET", pathBytes: []byte("/todos/42"), route: "/todos/:id", id: "0b5e1c2a-7c9d-4f55-a7f3-5b8e3c1d2f10"}
	d := core.Done{Status: 200, Bytes: 11, Duration: 15300, Time: time.Now()}
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h.out.appendEntry(e, d)
		}
	})
	b.Run("slog", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e.log(h, d)
		}
	})
}

// TestAppendInt: appendInt writes what strconv does, at the edges of every group of digits.
func TestAppendInt(t *testing.T) {
	vs := []int64{0, 1, 9, 10, 99, 100, 999, 1000, 1001, 99999, 100000, 1234567, math.MaxInt64, -1, -1000, math.MinInt64}
	for p := int64(1); p < math.MaxInt64/10; p *= 10 {
		vs = append(vs, p-1, p, p+1)
	}
	for _, v := range vs {
		if got, want := string(appendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Errorf("appendInt(%d) = %q, want %q", v, got, want)
		}
	}
}
