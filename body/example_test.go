package body_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
)

// serveExample runs h on a free loopback port and returns its base URL and a stop function.
func serveExample(h core.Handler) (string, func()) {
	s := core.NewServer(h, core.Options{Addr: "127.0.0.1:0"})
	if err := s.Listen(); err != nil {
		panic(err)
	}
	go s.ListenAndServe()
	return "http://" + s.Addr().String(), func() { s.Shutdown(context.Background()) }
}

func show(resp *http.Response, err error) {
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Printf("%d %s\n", resp.StatusCode, b)
}

// Read the body in pieces as it arrives: the handler parks between pieces, and nothing is held
// but its own buffer.
func Example_read() {
	base, stop := serveExample(func(c *core.Ctx) {
		buf := make([]byte, 32<<10)
		var total int
		for {
			n, err := c.ReadBody(buf)
			total += n
			if err == io.EOF {
				break
			}
			if err != nil {
				return // the server answers 400, 408 or 413 itself
			}
		}
		fmt.Fprintf(c, "received %d bytes", total)
	})
	defer stop()
	show(http.Post(base+"/", "application/octet-stream", strings.NewReader(strings.Repeat("x", 100_000))))
	// Output: 200 received 100000 bytes
}

// Decode a small JSON body under a limit. A body over the limit is refused with 413 before it
// is read, when its Content-Length says so.
func ExampleReadAll() {
	base, stop := serveExample(func(c *core.Ctx) {
		b, err := body.ReadAll(c, 1<<10)
		if errors.Is(err, core.ErrBodyTooLarge) {
			return // answered 413, Connection: close
		}
		var in struct{ Name string }
		if err != nil || json.Unmarshal(b, &in) != nil {
			c.SetStatus(400)
			c.WriteString("bad request")
			return
		}
		fmt.Fprintf(c, "hello, %s", in.Name)
	})
	defer stop()
	show(http.Post(base+"/", "application/json", strings.NewReader(`{"name":"dwell"}`)))
	show(http.Post(base+"/", "application/json", strings.NewReader(strings.Repeat(" ", 2000))))
	// Output:
	// 200 hello, dwell
	// 413
}

// Reader plugs the body into anything that takes an io.Reader.
func ExampleReader() {
	base, stop := serveExample(func(c *core.Ctx) {
		h := sha256.New()
		if _, err := io.Copy(h, body.Reader(c)); err != nil {
			return
		}
		fmt.Fprintf(c, "%x", h.Sum(nil)[:8])
	})
	defer stop()
	show(http.Post(base+"/", "text/plain", strings.NewReader("hello")))
	// Output: 200 2cf24dba5fb0a30e
}

// Trailers of a chunked body are known once it has been read to its end.
func Example_trailers() {
	base, stop := serveExample(func(c *core.Ctx) {
		n, _ := body.Discard(c)
		fmt.Fprintf(c, "%d bytes, checksum %s", n, c.Trailer("X-Checksum"))
	})
	defer stop()
	req, _ := http.NewRequest("POST", base+"/", io.MultiReader(strings.NewReader("chunked body")))
	req.Trailer = http.Header{"X-Checksum": {"abc123"}}
	show(http.DefaultClient.Do(req))
	// Output: 200 12 bytes, checksum abc123
}

// ServeContent serves anything seekable, with ranges and validators.
func ExampleServeContent() {
	modified := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	base, stop := serveExample(func(c *core.Ctx) {
		body.ServeContent(c, "greeting.txt", modified, strings.NewReader("Hello, world"))
	})
	defer stop()
	req, _ := http.NewRequest("GET", base+"/", nil)
	req.Header.Set("Range", "bytes=7-")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Header.Get("Content-Range"), resp.Header.Get("Last-Modified"))
	show(resp, nil)
	// Output:
	// bytes 7-11/12 Wed, 01 May 2024 12:00:00 GMT
	// 206 world
}

// ServeRoot serves a directory read-only; nothing outside it is reachable.
func ExampleServeRoot() {
	dir, _ := os.MkdirTemp("", "site")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("<h1>home</h1>"), 0o644)
	base, stop := serveExample(func(c *core.Ctx) {
		if c.Method() != "GET" && c.Method() != "HEAD" {
			c.SetStatus(405)
			c.SetHeader("Allow", "GET, HEAD")
			return
		}
		body.ServeRoot(c, dir, c.Path())
	})
	defer stop()
	resp, err := http.Get(base + "/")
	if err == nil {
		fmt.Println(resp.Header.Get("Content-Type"))
	}
	show(resp, err)
	show(http.Get(base + "/%2e%2e/etc/passwd"))
	show(http.Get(base + "/missing.txt"))
	// Output:
	// text/html; charset=utf-8
	// 200 <h1>home</h1>
	// 400 400 Bad Request
	//
	// 404 404 Not Found
}

// ServeFile sends one file, with sendfile(2).
func ExampleServeFile() {
	f, _ := os.CreateTemp("", "report-*.csv")
	defer os.Remove(f.Name())
	f.WriteString("a,b\n1,2\n")
	f.Close()
	base, stop := serveExample(func(c *core.Ctx) {
		c.SetHeader("Content-Disposition", `attachment; filename="report.csv"`)
		body.ServeFile(c, f.Name())
	})
	defer stop()
	resp, err := http.Get(base + "/report")
	if err == nil {
		fmt.Println(resp.Header.Get("Content-Type"), resp.ContentLength)
	}
	show(resp, err)
	// Output:
	// text/csv; charset=utf-8 8
	// 200 a,b
	// 1,2
}
