// Package jetstreamtest runs a NATS server with JetStream inside a test's process, on a
// loopback port and a temporary store, for the tests of code built on wait/jetstream — as
// net/http/httptest runs an HTTP server. Stop and Start serve again on the same port and
// store, as an operator restarting NATS would; Connect connects as a jetstream.Topic needs.
package jetstreamtest

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A Server is a NATS server with JetStream, for the length of a test.
type Server struct {
	t    testing.TB
	dir  string
	port int
	s    *server.Server
}

// New starts a server on 127.0.0.1 (any port) with a store in a temporary directory; it stops
// when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	ns := &Server{t: t, dir: t.TempDir(), port: -1}
	ns.Start()
	t.Cleanup(ns.Stop)
	return ns
}

// Start starts the server again after Stop, on the same port and store; it does nothing while
// the server runs.
func (ns *Server) Start() {
	ns.t.Helper()
	if ns.s != nil {
		return
	}
	s, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: ns.port, JetStream: true, StoreDir: ns.dir, NoLog: true, NoSigs: true,
	})
	if err != nil {
		ns.t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(coretest.Patience) {
		ns.t.Fatalf("NATS server not ready within %v", coretest.Patience)
	}
	ns.s = s
	ns.port = s.Addr().(*net.TCPAddr).Port
}

// Stop shuts the server down, keeping its store; it does nothing when the server is stopped.
func (ns *Server) Stop() {
	if ns.s != nil {
		ns.s.Shutdown()
		ns.s.WaitForShutdown()
		ns.s = nil
	}
}

// URL returns the server's address, "nats://127.0.0.1:PORT", the same across Stop and Start.
func (ns *Server) URL() string { return "nats://127.0.0.1:" + strconv.Itoa(ns.port) }

// Connect connects to url as a jetstream.Topic needs (nats.ReconnectBufSize(-1)), reconnecting
// quickly and for ever, until the test ends.
func Connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.ReconnectBufSize(-1), nats.MaxReconnects(-1),
		nats.ReconnectWait(50*time.Millisecond), nats.ReconnectJitter(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// CreateStream creates a stream as an operator would, through js, and returns it. It is for a
// test that deletes a stream and creates it again: a NATS server may refuse the creation a
// moment after the deletion, while the deleted stream's store is still going away ("error
// creating store for stream", error code 10049), and an operator would try again; so does
// CreateStream, until Patience runs out. Any other error fails the test at once.
func CreateStream(t testing.TB, js jetstream.JetStream, cfg jetstream.StreamConfig) jetstream.Stream {
	t.Helper()
	var st jetstream.Stream
	coretest.WaitFor(t, "the stream "+strconv.Quote(cfg.Name)+" created", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), coretest.Patience)
		defer cancel()
		var err error
		st, err = js.CreateStream(ctx, cfg)
		var api *jetstream.APIError
		if errors.As(err, &api) && api.ErrorCode == storeNotMade {
			t.Logf("creating the stream %q: %v; trying again", cfg.Name, err)
			return false
		}
		if err != nil {
			t.Fatalf("creating the stream %q: %v", cfg.Name, err)
		}
		return true
	})
	return st
}

// storeNotMade is the JetStream error code of a stream whose store could not be made.
const storeNotMade jetstream.ErrorCode = 10049
