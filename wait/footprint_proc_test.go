package wait

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// The server process of the footprint measurements, and how they read it from outside.

const footprintServerEnv = "DWELL_WAIT_FOOTPRINT_SERVER"

// TestFootprintServer is the server process of measureFootprint; on its own it does nothing.
// It serves parkServer on one loop, prints its address, and stops when its standard input
// closes. Its stall detector is off: on a loaded machine code that waits for a CPU can outlast
// the threshold, and what the detector then takes to look into it (a goroutine profile, a note
// with a stack) would count as what the parked requests hold, there or not with the scheduling.
func TestFootprintServer(t *testing.T) {
	if os.Getenv(footprintServerEnv) != "1" {
		t.Skip("runs only as the footprint measurements' server")
	}
	s, _ := coretest.Serve(t, newParkServer().handle, core.Options{Loops: 1, StallThreshold: -1})
	fmt.Printf("listening http://%s\n", s.Addr())
	os.Stdin.Read(make([]byte, 1))
}

type footprint struct {
	live     float64       // bytes of live heap and stacks per parked request
	rss      float64       // bytes of server RSS per parked request
	release  time.Duration // from the release request to the last answer read
	answered int           // parked requests answered by the one release
}

// measureFootprint starts a server process, parks n2 requests on path and measures the growth
// per request between n1 and n2, then releases them all with one request.
func measureFootprint(t testing.TB, path string, n1, n2 int) footprint {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFootprintServer$")
	cmd.Env = append(os.Environ(), footprintServerEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close() // the server's signal to stop
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening http://")
	if err != nil || !ok {
		t.Fatalf("server said %q (%v)", line, err)
	}
	pid := cmd.Process.Pid
	req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr)
	parked := func(n int) func() bool {
		return func() bool { return roundTrip(t, addr, "/waiting") == strconv.Itoa(n) }
	}
	measure := func() (rss, live int64) {
		rss = settledRSS(t, pid) // first: /live collects garbage
		live, err := strconv.ParseInt(roundTrip(t, addr, "/live"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return rss, live
	}

	// Prime the loop's pools (coroutines, requests, buffers) as a running server would have.
	warm := openRaw(t, addr, make(rawConns, 0, 300), req)
	coretest.WaitFor(t, "warm-up parked", parked(len(warm)))
	roundTrip(t, addr, "/release")
	warm.readAll("released")
	warm.close()

	first := openRaw(t, addr, make(rawConns, 0, n1), req)
	defer first.close()
	coretest.WaitFor(t, "first parked", parked(n1))
	r1, l1 := measure()
	rest := openRaw(t, addr, make(rawConns, 0, n2-n1), req)
	defer rest.close()
	coretest.WaitFor(t, "all parked", parked(n2))
	r2, l2 := measure()

	start := time.Now()
	roundTrip(t, addr, "/release")
	answered := first.readAll("released") + rest.readAll("released")
	n := float64(n2 - n1)
	return footprint{
		live:     float64(l2-l1) / n,
		rss:      float64(r2-r1) / n,
		release:  time.Since(start),
		answered: answered,
	}
}

// settledRSS reads the process's resident memory once it has stopped using CPU.
func settledRSS(t testing.TB, pid int) int64 {
	prev := cpuTicks(t, pid)
	for range 40 {
		time.Sleep(50 * time.Millisecond)
		now := cpuTicks(t, pid)
		if now == prev {
			break
		}
		prev = now
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// cpuTicks returns the process's user plus system time in clock ticks.
func cpuTicks(t testing.TB, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}
