package serve

import (
	"fmt"
	"os"

	"github.com/dwellhttp/dwell/core/internal/netpoll"
)

// The pollers a loop may watch its descriptors with (Options.Poller), and the environment
// variable that chooses one for a program whose Options do not.
const (
	PollerEpoll   = "epoll"
	PollerIOUring = "io_uring"
	PollerEnv     = "DWELL_POLLER"
)

// pollEvents is how many events a loop takes from its poller a turn.
const pollEvents = 256

// newPoller returns a new loop's poller, the one Options.Poller or else DWELL_POLLER names;
// epoll by default. Where io_uring cannot be used (disabled by the kernel.io_uring_disabled
// sysctl, refused by a seccomp profile, an old kernel, not enough memory), the loop polls with
// epoll, and the first loop to find that out logs why. s.mu is held.
func (s *Server) newPoller() (*netpoll.Poller, error) {
	choice, from := s.opts.Poller, "Options.Poller"
	if choice == "" {
		choice, from = os.Getenv(PollerEnv), PollerEnv
	}
	switch choice {
	case "", PollerEpoll:
	case PollerIOUring:
		if !s.ringRefused {
			p, err := netpoll.NewRingPoller(pollEvents)
			if err == nil {
				return p, nil
			}
			s.ringRefused = true
			s.opts.Logger.Warn("dwell: io_uring cannot be used here; the loops poll with epoll", "err", err)
		}
	default:
		return nil, fmt.Errorf("dwell: %s is %q: want %q or %q", from, choice, PollerEpoll, PollerIOUring)
	}
	return netpoll.NewPoller(pollEvents)
}
