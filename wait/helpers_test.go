package wait

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/core/coretest"
	"golang.org/x/sys/unix"
)

// client is a test connection speaking HTTP/1.1 by hand.
type client struct{ *coretest.Conn }

func dial(t testing.TB, addr string) *client {
	t.Helper()
	return &client{coretest.Dial(t, addr)}
}

// get sends a GET for target without waiting for the answer.
func (c *client) get(target string) {
	c.T.Helper()
	c.Send("GET " + target + " HTTP/1.1\r\nHost: h\r\n\r\n")
}

// response reads one response and returns its status and body.
func (c *client) response() (int, string) {
	c.T.Helper()
	resp, body := c.Response("GET")
	return resp.StatusCode, body
}

// roundTrip sends a GET on a fresh connection and returns the body.
func roundTrip(t testing.TB, addr, target string) string {
	t.Helper()
	c := dial(t, addr)
	c.get(target)
	_, body := c.response()
	c.Close()
	return body
}

// errString names an error for a response body.
func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// waiting counts the waiters linked in s, over all loops.
func (h *Sequence) waiting() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, wl := range h.lists {
		n += wl.n
	}
	return n
}

// idle reports whether h holds no waiter.
func (h *Sequence) idle() bool { return h.waiting() == 0 }

// rawConns are client connections made with bare sockets, so that a test measuring the server's
// memory in the same process adds nothing of the client's to the heap.
type rawConns []int

// openRaw fills fds up to its capacity with sockets connected to addr, and sends req on each.
// The caller allocates fds, so that a measurement can leave it out.
func openRaw(t testing.TB, addr string, fds rawConns, req string) rawConns {
	t.Helper()
	ap, err := netip4(addr)
	if err != nil {
		t.Fatal(err)
	}
	for len(fds) < cap(fds) {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			fds.close()
			t.Fatal(err)
		}
		fds = append(fds, fd)
		if err := connect(fd, ap); err != nil {
			fds.close()
			t.Fatalf("connect %d: %v", len(fds), err)
		}
		tv := unix.Timeval{Sec: 20}
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		if err := writeAll(fd, req); err != nil {
			fds.close()
			t.Fatal(err)
		}
	}
	return fds
}

// connect is a blocking connect that survives signals: an interrupted connect goes on in the
// kernel, so wait for it instead of calling it again.
func connect(fd int, sa unix.Sockaddr) error {
	err := unix.Connect(fd, sa)
	if err != unix.EINTR {
		return err
	}
	for {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		if _, err := unix.Poll(pfd, 10000); err == unix.EINTR {
			continue
		} else if err != nil {
			return err
		}
		if e, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR); err != nil || e != 0 {
			return fmt.Errorf("connect: %v %v", unix.Errno(e), err)
		}
		return nil
	}
}

// writeAll writes s, retrying after signals.
func writeAll(fd int, s string) error {
	for b := []byte(s); len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func netip4(addr string) (*unix.SockaddrInet4, error) {
	ta, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return nil, err
	}
	sa := &unix.SockaddrInet4{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To4())
	return sa, nil
}

// readAll reads one response from every connection and reports how many contain want.
func (fds rawConns) readAll(want string) int {
	ok := 0
	buf := make([]byte, 4096)
	for _, fd := range fds {
		var got []byte
		for !strings.Contains(string(got), want) {
			n, err := unix.Read(fd, buf)
			if err == unix.EINTR {
				continue // the runtime's preemption signal; reads with a timeout are not restarted
			}
			if n <= 0 || err != nil {
				break
			}
			got = append(got, buf[:n]...)
		}
		if strings.Contains(string(got), want) {
			ok++
		}
	}
	return ok
}

func (fds rawConns) close() {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
