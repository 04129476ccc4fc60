// Command gnet is the floor of the dwell benchmarks' CPU figures: one gnet event loop
// (github.com/panjf2000/gnet/v2) with the least HTTP that keeps framing right on keep-alive and
// pipelined connections, answering GET /hello with a fixed response. Its cost per request is
// roughly the cost of the loop and the syscalls alone; what a server spends above it is its own.
//
// It is not an HTTP server: no file serving, no bodies, no long polls, no net/http handlers; every
// other request gets a 404, a malformed one a 400 and the connection's end.
package main

import (
	"log"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/floorhttp"
	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/panjf2000/gnet/v2"
	"github.com/panjf2000/gnet/v2/pkg/logging"
)

func main() {
	f := peer.ParseFlags()
	s := &server{booted: make(chan struct{}), answers: floorhttp.NewAnswers("gnet")}

	failed := make(chan error, 1)
	go func() {
		// One loop, like every peer on its one core; no ticker, the date is refreshed on traffic.
		failed <- gnet.Run(s, "tcp://"+f.Addr,
			gnet.WithMulticore(false),
			gnet.WithNumEventLoop(1),
			gnet.WithTCPNoDelay(gnet.TCPNoDelay),
			gnet.WithLogLevel(logging.ErrorLevel))
	}()
	select {
	case <-s.booted:
	case err := <-failed:
		log.Fatal(err)
	}
	peer.Ready(f.Addr)
	// Returning ends the process and with it every connection: Engine.Stop polls for the loop's
	// end every 500 ms, which would add that to every measurement's stop.
	peer.WaitForStop()
}

// server is the event handler. Its callbacks all run on the one loop goroutine, so its answers
// and scratch buffer need no lock.
type server struct {
	gnet.BuiltinEventEngine
	booted  chan struct{}
	answers *floorhttp.Answers
	// out collects the answers to every complete request of one read, written with one write:
	// a pipelined batch costs one syscall.
	out []byte
}

// OnBoot runs once the listener accepts.
func (s *server) OnBoot(gnet.Engine) gnet.Action {
	close(s.booted)
	return gnet.None
}

// OnTraffic answers every complete request in the connection's input and leaves an incomplete
// one for the next read.
func (s *server) OnTraffic(c gnet.Conn) gnet.Action {
	in, _ := c.Peek(-1)
	s.answers.Refresh(time.Now())
	used, out, end := s.answers.Answer(in, s.out[:0])
	if used > 0 {
		// Discard(0) would drop the whole input.
		c.Discard(used)
	}
	if len(out) > 0 {
		// Write sends what the socket takes and queues the rest; a failed write closes the
		// connection inside gnet.
		c.Write(out)
	}
	s.out = out
	if end {
		return gnet.Close
	}
	return gnet.None
}
