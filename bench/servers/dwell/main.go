// Command dwell is dwell's own benchmark server, with the same endpoints as the peers, written
// the way the examples are: the router, package body for the upload and the file, and a
// wait.Event for the long polls. With -cert and -key it serves HTTPS on its loops
// (Options.TLSConfig, Server.ListenAndServeTLS; -curves picks the key exchange), for the
// HTTPS figures. -write-timeout sets Options.WriteTimeout (the zero-window abuse figure's).
package main

import (
	"context"
	"flag"
	"io"
	"log"
	"strconv"
	"sync"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/router"
	"github.com/dwellhttp/dwell/wait"
)

func main() {
	tf := peer.RegisterTLSFlags()
	wt := flag.Duration("write-timeout", 0, "Options.WriteTimeout (0: dwell's default, 30 s)")
	f := peer.ParseFlags()
	opts := core.Options{Addr: f.Addr, WriteTimeout: *wt}
	if tf.Enabled() {
		opts.TLSConfig = tf.Config()
	}
	srv := core.NewServer(routes(f.File), opts)
	if err := srv.Listen(); err != nil {
		log.Fatal(err)
	}
	go func() {
		var err error
		if tf.Enabled() {
			err = srv.ListenAndServeTLS(tf.Cert, tf.Key)
		} else {
			err = srv.ListenAndServe()
		}
		if err != core.ErrServerClosed {
			log.Fatal(err)
		}
	}()
	if tf.Enabled() {
		peer.ReadyTLS(srv.Addr().String())
	} else {
		peer.Ready(srv.Addr().String())
	}
	peer.WaitForStop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
}

func routes(file string) core.Handler {
	var released wait.Event
	bufs := sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}
	r := router.New()
	r.GET("/hello", func(c *core.Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString(peer.Hello)
	})
	r.HandleHTTP("GET", "/std/hello", peer.StdHello)
	r.GET("/file", func(c *core.Ctx) { body.ServeFile(c, file) })
	r.ServeFS("/fs/*filepath", peer.Assets, body.FSOptions{})
	r.POST("/upload", func(c *core.Ctx) {
		// Its own buffer: an upload parks while it waits for bytes, and another runs meanwhile.
		bp := bufs.Get().(*[]byte)
		defer bufs.Put(bp)
		var n int64
		for {
			k, err := c.ReadBody(*bp)
			n += int64(k)
			if err == io.EOF {
				break
			}
			if err != nil {
				return
			}
		}
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString(strconv.FormatInt(n, 10))
	})
	r.GET("/poll", func(c *core.Ctx) {
		if released.Wait(c, 0) == nil {
			c.SetHeader("Content-Type", "text/plain")
			c.WriteString(peer.Released)
		}
	})
	r.POST("/release", func(c *core.Ctx) {
		released.Fire()
		c.WriteString("ok")
	})
	r.GET("/download", func(c *core.Ctx) {
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
	})
	return r.Handler()
}

var zero = make([]byte, 64<<10)
