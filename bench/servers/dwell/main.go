// Command dwell is dwell's own benchmark server, with the same endpoints as the peers.
package main

import (
	"context"
	"log"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/core"
)

func main() {
	f := peer.ParseFlags()
	srv := core.NewServer(handler(f.File), core.Options{Addr: f.Addr})
	if err := srv.Listen(); err != nil {
		log.Fatal(err)
	}
	go func() {
		if err := srv.ListenAndServe(); err != core.ErrServerClosed {
			log.Fatal(err)
		}
	}()
	peer.Ready(srv.Addr().String())
	peer.WaitForStop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
}

// parked holds the wakers of the polls waiting for a release.
var (
	mu     sync.Mutex
	parked []core.Waker
)

func handler(file string) core.Handler {
	buf := make([]byte, 64<<10)
	return func(c *core.Ctx) {
		switch c.Path() {
		case "/hello":
			c.SetHeader("Content-Type", "text/plain")
			c.WriteString(peer.Hello)
		case "/file":
			f, err := os.Open(file)
			if err != nil {
				c.SetStatus(404)
				return
			}
			defer f.Close()
			st, _ := f.Stat()
			c.SetHeader("Content-Length", strconv.FormatInt(st.Size(), 10))
			c.SendFile(f, 0, st.Size())
		case "/upload":
			var n int64
			for {
				k, err := c.ReadBody(buf)
				n += int64(k)
				if err != nil {
					break
				}
			}
			c.WriteString(strconv.FormatInt(n, 10))
		case "/poll":
			mu.Lock()
			parked = append(parked, c.Waker())
			mu.Unlock()
			if c.Suspend() == nil {
				c.WriteString(peer.Released)
			}
		case "/release":
			mu.Lock()
			ws := parked
			parked = nil
			mu.Unlock()
			for _, w := range ws {
				w.Wake(nil)
			}
			c.WriteString("ok")
		case "/download":
			n, err := peer.DownloadSize(c.Query("n"))
			if err != nil {
				c.SetStatus(400)
				return
			}
			c.SetHeader("Content-Type", "application/octet-stream")
			c.SetHeader("Content-Length", strconv.FormatInt(n, 10))
			for n > 0 {
				k := min(n, int64(len(zero)))
				if _, err := c.Write(zero[:k]); err != nil {
					return
				}
				n -= k
			}
		default:
			c.SetStatus(404)
		}
	}
}

var zero = make([]byte, 64<<10)
