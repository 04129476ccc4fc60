package main

import (
	"context"
	"os"
	"strconv"
	"testing"
)

// TestTLSBurst runs tls-burst against an in-process server: every client of the crowd gets its
// answer, the probes are timed meanwhile, and the server's CPU is counted.
func TestTLSBurst(t *testing.T) {
	addr, cert := tlsServer(t)
	v, err := runTLSBurst(context.Background(), []string{"-addr", addr, "-pid", strconv.Itoa(os.Getpid()),
		"-n", "50", "-probes", "2", "-cert", cert})
	if err != nil {
		t.Fatal(err)
	}
	res := v.(*tlsBurstResult)
	if res.N != 50 || res.AllMs <= 0 || res.P50Ms <= 0 || res.P50Ms > res.AllMs || res.ProbeN == 0 || res.CPUms <= 0 {
		t.Fatalf("%+v", res)
	}
}
