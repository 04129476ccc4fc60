package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// dialer spreads connections over several loopback source addresses once one address would run
// out of ephemeral ports: every 127.0.0.0/8 address is local on Linux, and each brings its own
// port range.
type dialer struct {
	addr    string
	sources []*net.TCPAddr
	next    atomic.Uint64
	timeout time.Duration
}

// newDialer prepares to open up to n connections to addr.
func newDialer(addr string, n int) (*dialer, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	d := &dialer{addr: addr, timeout: 5 * time.Second}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() || ip.To4() == nil {
		return d, nil
	}
	perSource := portsPerSource()
	k := (n + perSource - 1) / perSource
	if k <= 1 {
		return d, nil
	}
	if k > 250 {
		return nil, fmt.Errorf("%d connections need more than 250 source addresses", n)
	}
	for i := range k {
		d.sources = append(d.sources, &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i))})
	}
	return d, nil
}

// portsPerSource is how many connections one source address can take: three quarters of the
// ephemeral range, leaving room for sockets still in TIME_WAIT from earlier runs.
func portsPerSource() int {
	lo, hi := 32768, 60999
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		f := strings.Fields(string(b))
		if len(f) == 2 {
			a, err1 := strconv.Atoi(f[0])
			z, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil && z > a {
				lo, hi = a, z
			}
		}
	}
	return (hi - lo + 1) * 3 / 4
}

func (d *dialer) dial() (net.Conn, error) {
	nd := net.Dialer{Timeout: d.timeout}
	if len(d.sources) > 0 {
		nd.LocalAddr = d.sources[d.next.Add(1)%uint64(len(d.sources))]
	}
	return nd.Dial("tcp", d.addr)
}

// request builds a minimal HTTP/1.1 request. The load tool writes requests by hand so that each
// connection costs the client a socket and a small buffer, and nothing else gets measured.
func request(method, path, host string, contentLength int64, extra ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path, host)
	if contentLength >= 0 {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", contentLength)
	}
	for _, h := range extra {
		b.WriteString(h)
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// response is what the load tool checks of an answer.
type response struct {
	status int
	// length is the number of body bytes read.
	length int64
	// head is the start of the body (up to 64 bytes), to check short answers.
	head []byte
	// close reports that the server will close the connection after this response.
	close bool
}

var errMalformed = errors.New("load: malformed response")

// readResponse reads one response from br. The body goes through buf (which may be nil for small
// bodies), so a large download is counted without being kept.
func readResponse(br *bufio.Reader, buf []byte) (response, error) {
	var r response
	line, err := br.ReadSlice('\n')
	if err != nil {
		return r, err
	}
	f := strings.Fields(string(line))
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/1.") {
		return r, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	if r.status, err = strconv.Atoi(f[1]); err != nil {
		return r, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	r.close = f[0] == "HTTP/1.0"
	length, chunked := int64(-1), false
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return r, err
		}
		if len(line) <= 2 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return r, fmt.Errorf("%w: header %q", errMalformed, line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case asciiEqual(name, "content-length"):
			if length, err = strconv.ParseInt(string(value), 10, 64); err != nil {
				return r, fmt.Errorf("%w: content-length %q", errMalformed, value)
			}
		case asciiEqual(name, "transfer-encoding"):
			chunked = asciiEqual(value, "chunked")
		case asciiEqual(name, "connection"):
			r.close = asciiEqual(value, "close")
		}
	}
	if buf == nil {
		buf = make([]byte, 4096)
	}
	switch {
	case chunked:
		err = readChunked(br, buf, &r)
	case length >= 0:
		err = readBody(br, buf, length, &r)
	default:
		r.close = true
		err = readBody(br, buf, -1, &r)
	}
	return r, err
}

func asciiEqual(b []byte, s string) bool {
	return strings.EqualFold(string(b), s)
}

// readBody reads n bytes, or to EOF when n is negative.
func readBody(br *bufio.Reader, buf []byte, n int64, r *response) error {
	for n != 0 {
		p := buf
		if n > 0 && int64(len(p)) > n {
			p = p[:n]
		}
		k, err := br.Read(p)
		if len(r.head) < 64 {
			r.head = append(r.head, p[:min(k, 64-len(r.head))]...)
		}
		r.length += int64(k)
		if n > 0 {
			n -= int64(k)
		}
		if err == io.EOF && n < 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func readChunked(br *bufio.Reader, buf []byte, r *response) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		sz, _, _ := bytes.Cut(bytes.TrimSpace(line), []byte(";"))
		n, err := strconv.ParseInt(string(sz), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: chunk size %q", errMalformed, line)
		}
		if n == 0 {
			for { // trailer section
				line, err := br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(line) <= 2 {
					return nil
				}
			}
		}
		if err := readBody(br, buf, n, r); err != nil {
			return err
		}
		if _, err := br.Discard(2); err != nil {
			return err
		}
	}
}

// exchange sends req on c and reads the answer, expecting status 200 and, when want is not empty,
// a body that starts with want.
func exchange(c net.Conn, br *bufio.Reader, req []byte, want string) (response, error) {
	if _, err := c.Write(req); err != nil {
		return response{}, err
	}
	r, err := readResponse(br, nil)
	if err != nil {
		return r, err
	}
	return r, check(r, want)
}

func check(r response, want string) error {
	if r.status != 200 {
		return fmt.Errorf("load: status %d, body %q", r.status, r.head)
	}
	if want != "" && !bytes.HasPrefix(r.head, []byte(want)) {
		return fmt.Errorf("load: body %q, want %q", r.head, want)
	}
	return nil
}
