package http2

import (
	"strconv"
	"testing"

	"github.com/dwellhttp/dwell/core/internal/h2"
	"github.com/dwellhttp/dwell/core/internal/serve"
)

// The allowance of frames that carry no request (h2.Calm.go): what real clients send while a
// long stream runs never spends it; floods of window updates and 1-byte windows still do.

// readGranting reads frames until stream id has ended, giving back every DATA frame's bytes to
// the windows as a client does once it has consumed half a window (or, with every, after each
// frame), and returns the stream.
func (c *h2client) readGranting(id uint32, window int, every bool) *h2resp {
	c.t.Helper()
	pendingConn, pendingStream := 0, 0
	for {
		fh, p, ok := c.frame()
		if !ok {
			c.t.Fatalf("the connection closed with stream %d under way (GOAWAY %+v)", id, c.goAway)
		}
		if fh.Type == h2.TypeData && len(p) > 0 {
			pendingConn += len(p)
			pendingStream += len(p)
			if every || pendingConn >= window/2 {
				c.write(h2.AppendWindowUpdate(nil, 0, uint32(pendingConn)))
				pendingConn = 0
			}
			if every || pendingStream >= window/2 {
				c.write(h2.AppendWindowUpdate(nil, id, uint32(pendingStream)))
				pendingStream = 0
			}
		}
		if r := c.streams[id]; r != nil && (r.end || r.rst) {
			return r
		}
	}
}

// TestH2LongDownload: a download many times the frames' allowance, to a client with the
// default 64 KiB windows that gives them back as it reads — after every frame, or once it has
// read half a window — arrives whole, with no GOAWAY.
func TestH2LongDownload(t *testing.T) {
	const size = 16 << 20 // 1,024 frames of 16 KiB: over h2.CalmMax window updates at every frame
	for _, every := range []bool{true, false} {
		t.Run("every frame "+strconv.FormatBool(every), func(t *testing.T) {
			_, addr := startServer(t, h2Handler(nil, nil), serve.Options{})
			c := dialH2(t, addr)
			c.get(1, "/big?n="+strconv.Itoa(size))
			r := c.readGranting(1, h2.DefaultWindow, every)
			if r.rst || len(r.body) != size {
				t.Fatalf("%d of %d bytes, reset %v (code %v)", len(r.body), size, r.rst, r.code)
			}
			c.get(3, "/hello")
			if r := c.response(3); r.status != 200 || c.goAway != nil {
				t.Fatalf("after the download: %d, GOAWAY %+v", r.status, c.goAway)
			}
		})
	}
}

// TestH2PingPong: one stream carries thousands of request/response messages, and the client
// pings after each answer, as gRPC's bandwidth estimator does, and gives the windows back once
// half is read: the connection serves it to the end.
func TestH2PingPong(t *testing.T) {
	const exchanges = 3 * h2.CalmMax
	h := func(c *serve.Ctx) {
		buf := make([]byte, 64)
		for {
			n, err := c.ReadBody(buf)
			if n > 0 {
				c.Write(buf[:n])
				c.Flush()
			}
			if err != nil {
				return
			}
		}
	}
	_, addr := startServer(t, h, serve.Options{})
	c := dialH2(t, addr)
	c.request(1, false, ":method", "POST", ":scheme", "http", ":authority", "h", ":path", "/stream")
	msg := []byte("0123456789abcdef")
	read := 0
	for i := range exchanges {
		c.data(1, false, msg)
		want := (i + 1) * len(msg)
		c.until("answer "+strconv.Itoa(i), func() bool { s := c.streams[1]; return s != nil && len(s.body) >= want })
		if read += len(msg); read >= h2.DefaultWindow/2 {
			c.write(h2.AppendWindowUpdate(nil, 0, uint32(read)))
			c.write(h2.AppendWindowUpdate(nil, 1, uint32(read)))
			read = 0
		}
		c.write(h2.AppendPing(nil, false, [8]byte{byte(i)}))
	}
	c.data(1, true, nil)
	if r := c.response(1); r.rst || len(r.body) != exchanges*len(msg) || c.goAway != nil {
		t.Fatalf("%d of %d bytes, reset %v, GOAWAY %+v", len(r.body), exchanges*len(msg), r.rst, c.goAway)
	}
}

// TestH2TinyWindowFlood: a client that announces 1-byte windows and gives back one byte after
// every 1-byte DATA frame makes the server frame its response a byte at a time; its window
// updates spend the allowance, and the connection ends with ENHANCE_YOUR_CALM long before the
// response would.
func TestH2TinyWindowFlood(t *testing.T) {
	_, addr := startServer(t, h2Handler(nil, nil), serve.Options{})
	c := dialH2(t, addr, h2.Setting{ID: h2.SettingInitialWindowSize, Value: 1})
	c.get(1, "/big?n=100000")
	frames := 0
	for {
		fh, p, ok := c.frame()
		if !ok {
			break
		}
		if fh.Type == h2.TypeData && len(p) > 0 {
			frames++
			c.nc.Write(h2.AppendWindowUpdate(nil, 1, uint32(len(p)))) // until the server has closed
		}
	}
	if c.goAway == nil || c.goAway.code != h2.EnhanceYourCalm {
		t.Fatalf("after %d DATA frames: GOAWAY %+v, want ENHANCE_YOUR_CALM", frames, c.goAway)
	}
	if frames >= 2*h2.CalmMax {
		t.Fatalf("%d 1-byte DATA frames before the GOAWAY, over twice the allowance", frames)
	}
}
