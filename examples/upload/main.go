// Command upload stores request bodies as files. POST /files streams the body to disk — never
// holding it whole — and answers 201 with its id, size and SHA-256 as JSON; GET /files/:id
// sends a stored file back with sendfile, Range and conditional requests working.
//
// Disk writes run on the wait package's worker pool, so a slow disk parks only the upload that
// waits for it. An upload goes to a temporary name and is renamed only once complete: an
// aborted upload leaves no file behind.
//
// Flags: -addr, -loops, -dir (where files go, "uploads"), and -max-body, the largest upload
// accepted in bytes (1 GiB by default; 0 for no limit). A larger one is refused with 413 —
// before any of it is read when its Content-Length says so.
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
	"strings"
	"syscall"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/router"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	loops := flag.Int("loops", 0, "number of event loops (0: one per CPU)")
	dir := flag.String("dir", "uploads", "directory the files are stored in")
	maxBody := flag.Int64("max-body", 1<<30, "largest upload accepted, in bytes (0: no limit)")
	flag.Parse()

	s, err := openStore(*dir)
	if err != nil {
		log.Fatal(err)
	}
	srv := core.NewServer(s.handler(), core.Options{Addr: *addr, Loops: *loops, MaxBodyBytes: *maxBody})
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

// handler routes the store's two endpoints.
func (s *store) handler() core.Handler {
	r := router.New()
	r.POST("/files", s.upload)
	r.GET("/files/:id", s.download)
	return r.Handler()
}

// openStore prepares dir, removing the temporary files of uploads that a previous run did not
// finish (it was killed mid-upload).
func openStore(dir string) (*store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return &store{dir: dir}, nil
}
