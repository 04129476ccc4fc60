//go:build !race

package router

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// A handler runs on its coroutine's stack, above the router's frames, and a parked handler
// keeps that stack: 2 KiB as a goroutine starts, or 4 KiB for good once a call went deeper
// than the first 2 KiB allow. So every byte the router's frames take under a handler is a byte
// the handler can no longer use before its parked cost doubles. These tests measure that room.
//
// The runtime starts goroutines with the average stack size it saw at the last collection
// (GODEBUG adaptivestackstart), which in a test process is anyone's guess; so the measurement
// runs in a process of its own, the test binary again, with that setting off: every goroutine
// then starts with 2 KiB, as the coroutines of a server full of parked requests do.

// stackRoom returns how many bytes below its caller's frame the calling goroutine's stack can
// hold before it grows: it descends in small frames until the stack moves, which a growth
// does (the runtime copies the stack and adjusts pointers into it, such as top).
//
//go:noinline
func stackRoom() int {
	var top byte
	return descend(&top, uintptr(unsafe.Pointer(&top)))
}

//go:noinline
func descend(top *byte, was uintptr) int {
	var here byte
	if uintptr(unsafe.Pointer(top)) != was {
		return int(uintptr(unsafe.Pointer(top)) - uintptr(unsafe.Pointer(&here)))
	}
	return descend(top, was)
}

// roomOf serves h on a fresh server (so that the request runs on a fresh coroutine with a
// stack that never grew) and returns the room stackRoom found in the handler, which h writes
// as its body.
func roomOf(t *testing.T, h core.Handler, target string) int {
	t.Helper()
	_, addr := coretest.Serve(t, h, core.Options{})
	resp, body := dial(t, addr).do("GET", target)
	n, err := strconv.Atoi(body)
	if resp.StatusCode != 200 || err != nil {
		t.Fatalf("GET %s: %d %q", target, resp.StatusCode, body)
	}
	return n
}

func writeRoom(c *core.Ctx) { c.WriteString(strconv.Itoa(stackRoom())) }

// TestStackRoom: the router's frames under a handler take at most routerFrames bytes of its
// stack, whether the route is static or has parameters, and middleware adds only its own.
func TestStackRoom(t *testing.T) {
	if !strings.Contains(os.Getenv("GODEBUG"), "adaptivestackstart=0") {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStackRoom$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "GODEBUG="+os.Getenv("GODEBUG")+",adaptivestackstart=0")
		out, err := cmd.CombinedOutput()
		t.Logf("in a process with GODEBUG=adaptivestackstart=0:\n%s", out)
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	const routerFrames = 160
	direct := roomOf(t, writeRoom, "/")
	t.Logf("a handler served without the router has %d B of stack before it grows", direct)
	if direct >= 2048 {
		t.Fatalf("%d B of room: the coroutine did not start with a 2 KiB stack", direct)
	}
	passThrough := func(next core.Handler) core.Handler { return func(c *core.Ctx) { next(c) } }
	for _, tc := range []struct {
		name, target string
		mw           int
	}{
		{"static", "/static", 0},
		{"param", "/param/7", 0},
		{"catch-all", "/files/a/b", 0},
		{"static, two middleware", "/static", 2},
		{"param, two middleware", "/param/7", 2},
	} {
		r := New()
		for range tc.mw {
			r.Use(passThrough)
		}
		r.GET("/static", writeRoom)
		r.GET("/param/:id", writeRoom)
		r.GET("/files/*path", writeRoom)
		room := roomOf(t, r.Handler(), tc.target)
		t.Logf("%s: %d B, the router takes %d B", tc.name, room, direct-room)
		if tc.mw == 0 && direct-room > routerFrames {
			t.Errorf("%s: the router takes %d B of the handler's stack, want at most %d", tc.name, direct-room, routerFrames)
		}
	}
}
