// Command fileserver serves a directory read-only: GET and HEAD, with Range, conditional
// requests and sendfile. It never lists a directory (one with an index.html serves that) and
// never serves anything outside -dir, whatever the request path or symbolic links say.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	loops := flag.Int("loops", 0, "number of event loops (0: one per CPU)")
	dir := flag.String("dir", ".", "directory to serve")
	flag.Parse()

	root, err := filepath.Abs(*dir)
	if err == nil {
		err = checkDir(root)
	}
	if err != nil {
		log.Fatal(err)
	}
	srv := core.NewServer(fileServer(root), core.Options{Addr: *addr, Loops: *loops})
	if err := srv.Listen(); err != nil {
		log.Fatal(err)
	}
	// Signals are caught before the server says it is ready, so that one sent right after
	// the announcement shuts it down gracefully rather than killing it.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	fmt.Printf("listening http://%s\n", srv.Addr())

	go func() {
		<-stop
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			log.Printf("shutdown: %v", err)
		}
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, core.ErrServerClosed) {
		log.Fatal(err)
	}
}

// checkDir fails at start-up, with a message, for a -dir that cannot be served, rather than
// answering every request 500.
func checkDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("fileserver: %s is not a directory", dir)
	}
	return nil
}

// fileServer serves root read-only.
func fileServer(root string) core.Handler {
	return func(c *core.Ctx) {
		if m := c.Method(); m != "GET" && m != "HEAD" {
			c.SetStatus(405)
			c.SetHeader("Allow", "GET, HEAD")
			c.WriteString("405 Method Not Allowed\n")
			return
		}
		body.ServeRoot(c, root, c.Path())
	}
}
