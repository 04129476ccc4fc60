package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/coretest"
)

// TestMain runs the command itself when asked to by TestShutdownFinishesUpload.
func TestMain(m *testing.M) {
	if dir := os.Getenv("UPLOAD_RUN_MAIN"); dir != "" {
		os.Args = []string{"upload", "-addr", "127.0.0.1:0", "-dir", dir}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestShutdownFinishesUpload: an upload still arriving when SIGTERM comes is finished and
// stored whole within the grace period, never cut short.
func TestShutdownFinishesUpload(t *testing.T) {
	dir := t.TempDir()
	cmd := coretest.StartCommand(t, "UPLOAD_RUN_MAIN", dir)
	addr := cmd.Addr

	const size = 1 << 20
	c := coretest.Dial(t, addr)
	// The 100 Continue comes once the handler reads the body: the upload is running.
	c.Send("POST /files HTTP/1.1\r\nHost: h\r\nContent-Length: 1048576\r\nExpect: 100-continue\r\n\r\n")
	if resp, _ := c.Response("POST"); resp.StatusCode != 100 {
		t.Fatalf("status %d, want 100 Continue", resp.StatusCode)
	}
	part := strings.Repeat("u", size/2)
	c.Send(part)
	if err := cmd.Terminate(); err != nil {
		t.Fatal(err)
	}
	// The listener closes once the server has begun to shut down: the rest of the body comes
	// after that.
	coretest.WaitFor(t, "new connections refused after SIGTERM", func() bool {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			return true
		}
		nc.Close()
		return false
	})
	c.Send(part)
	resp, body := c.Response("POST")
	if resp.StatusCode != 201 || !resp.Close {
		t.Fatalf("%d, close %v: %q", resp.StatusCode, resp.Close, body)
	}
	var got stored
	if err := json.Unmarshal([]byte(body), &got); err != nil || got.Size != size {
		t.Fatalf("stored %+v (%v)", got, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, got.ID)); err != nil || fi.Size() != size {
		t.Fatalf("file on disk: %v %v", fi, err)
	}
	c.ExpectEOF()
	if err := cmd.Wait(coretest.Patience); err != nil {
		t.Fatalf("after SIGTERM: %v", err)
	}
}

// TestDefaultBodyLimit: without -max-body, an upload declared over 1 GiB is refused with 413
// before any of it is sent, and no file is made.
func TestDefaultBodyLimit(t *testing.T) {
	dir := t.TempDir()
	cmd := coretest.StartCommand(t, "UPLOAD_RUN_MAIN", dir)
	c := coretest.Dial(t, cmd.Addr)
	c.Send("POST /files HTTP/1.1\r\nHost: h\r\nContent-Length: 1073741825\r\nExpect: 100-continue\r\n\r\n")
	resp, _ := c.Response("POST")
	if resp.StatusCode != 413 {
		t.Fatalf("status %d, want 413", resp.StatusCode)
	}
	ok := coretest.Dial(t, cmd.Addr)
	ok.Send("POST /files HTTP/1.1\r\nHost: h\r\nContent-Length: 1073741824\r\nExpect: 100-continue\r\n\r\n")
	if resp, _ := ok.Response("POST"); resp.StatusCode != 100 {
		t.Fatalf("an upload of exactly 1 GiB: status %d, want 100 Continue", resp.StatusCode)
	}
	ok.Close()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".upload-") {
			t.Fatalf("file %s made for a refused upload", e.Name())
		}
	}
	cmd.Terminate()
	cmd.Wait(coretest.Patience)
}
