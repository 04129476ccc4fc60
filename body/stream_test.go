package body_test

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// TestSlowReaderMemoryBound streams 16 MiB to a client that reads slowly, written by the handler
// in 16 KiB pieces and by ServeContent from an in-memory reader. Writers park above the
// high-water mark instead of queueing, so the whole process allocates a small fraction of what
// it sends, and every byte arrives intact.
func TestSlowReaderMemoryBound(t *testing.T) {
	const total = 16 << 20
	content := payload(total, 5)
	sum := sha256.Sum256(content)
	_, addr := coretest.Serve(t, func(c *core.Ctx) {
		if c.Path() == "/content" {
			body.ServeContent(c, "data.bin", time.Time{}, bytes.NewReader(content))
			return
		}
		for off := 0; off < total; off += 16 << 10 {
			if _, err := c.Write(content[off : off+16<<10]); err != nil {
				t.Error(err)
				return
			}
		}
	}, core.Options{WriteHighWater: 64 << 10})
	for _, path := range []string{"/write", "/content"} {
		c := dial(t, addr)
		c.SetReadBuffer(32 << 10) // a small window, so the server's queue is what fills
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c.Send("GET " + path + " HTTP/1.1\r\nHost: h\r\n\r\n")
		resp, err := http.ReadResponse(c.R, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		buf := make([]byte, 16<<10)
		got := 0
		for {
			n, err := resp.Body.Read(buf)
			h.Write(buf[:n])
			got += n
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if got < 4<<20 {
				time.Sleep(100 * time.Microsecond) // slow at first, so every buffer fills
			}
		}
		runtime.ReadMemStats(&after)
		if got != total || !bytes.Equal(h.Sum(nil), sum[:]) {
			t.Fatalf("%s: %d bytes, digest mismatch", path, got)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
			t.Fatalf("%s: allocated %d bytes while sending %d; the queue is not bounded", path, grew, total)
		}
	}
}
