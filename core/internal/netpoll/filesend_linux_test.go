//go:build linux && !dwell_portable

package netpoll

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkFileSend measures what sending a file to a socket costs the server, the three ways a
// loop on io_uring could send one: sendfile(2), which both pollers use; the ring's splice, from
// the file into a pipe and from the pipe to the socket, linked; and the ring's read into memory
// linked to its send. A chunk at a time (64 KiB, the write queue's largest buffer, or 1 MiB),
// one at a time (as a connection has one send under way), from the page cache to a reader in
// another process (cat), on a socket that waits for room. It reports the process's CPU per MiB
// sent (cpu-µs/MiB), the kernel's I/O worker threads included: the ring's splice always runs on
// one of them (an iou-wrk thread), never inline. $DWELL_BENCH_READER_CPU pins the reader to
// that CPU, as the figures in design.md were measured:
//
//	DWELL_BENCH_READER_CPU=1 taskset -c 0 go test -run '^$' -bench FileSend ./core/internal/netpoll
func BenchmarkFileSend(b *testing.B) {
	if off := unsafe.Offsetof(sqe{}.bufGroup) + 2 + 2; off != spliceFDIn { // buf_index, personality
		b.Fatalf("splice_fd_in is at %d in an sqe, not %d", off, spliceFDIn)
	}
	f := pageCachedFile(b, fileSendSize)
	for _, way := range []struct {
		name string
		send func(r *ring, sock int, pipe [2]int, f *os.File, off int64, n int) (int, error)
	}{
		{"sendfile", sendfileChunk},
		{"ring-splice", spliceChunk},
		{"ring-read-send", readSendChunk},
	} {
		for _, chunk := range []int{64 << 10, fileSendMax} {
			b.Run(way.name+"/"+strconv.Itoa(chunk>>10)+"KiB", func(b *testing.B) {
				var r *ring
				var pipe [2]int
				if way.name != "sendfile" {
					var err error
					if r, err = newRing(8); err != nil {
						b.Skipf("io_uring cannot be used here: %v", err)
					}
					defer r.close()
					if err := unix.Pipe2(pipe[:], unix.O_CLOEXEC); err != nil {
						b.Fatal(err)
					}
					defer unix.Close(pipe[0])
					defer unix.Close(pipe[1])
					if _, err := unix.FcntlInt(uintptr(pipe[1]), unix.F_SETPIPE_SZ, chunk); err != nil {
						b.Fatal(err)
					}
				}
				sock, wait := catReader(b)
				b.SetBytes(int64(chunk))
				before := cpuUsed()
				b.ResetTimer()
				var off int64
				for range b.N {
					n, err := way.send(r, sock, pipe, f, off, chunk)
					if err != nil {
						b.Fatal(err)
					}
					if n != chunk {
						b.Fatalf("sent %d bytes of %d", n, chunk)
					}
					off = (off + int64(chunk)) % fileSendSize
				}
				b.StopTimer()
				mib := float64(b.N) * float64(chunk) / (1 << 20)
				b.ReportMetric(float64(cpuUsed()-before)/1e3/mib, "cpu-µs/MiB")
				unix.Close(sock)
				wait()
			})
		}
	}
}

const (
	fileSendSize = 64 << 20 // the file sent over and over
	fileSendMax  = 1 << 20  // the largest chunk sent at a time
)

// pageCachedFile returns a file of size bytes, read once so that its pages are cached.
func pageCachedFile(b *testing.B, size int) *os.File {
	f, err := os.CreateTemp(b.TempDir(), "file")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	chunk := make([]byte, fileSendMax)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	for range size / len(chunk) {
		if _, err := f.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	for off := int64(0); off < int64(size); off += int64(len(chunk)) {
		if _, err := f.ReadAt(chunk, off); err != nil {
			b.Fatal(err)
		}
	}
	return f
}

// catReader returns the descriptor of a connection (blocking) whose other end cat reads to its
// end, in a process of its own so that its CPU is not the benchmark's, and a function that waits
// for cat to finish once the descriptor is closed.
func catReader(b *testing.B) (int, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	read := "exec cat </dev/tcp/127.0.0.1/" + port + " >/dev/null"
	if cpu := os.Getenv("DWELL_BENCH_READER_CPU"); cpu != "" {
		read = "exec taskset -c " + cpu + " cat </dev/tcp/127.0.0.1/" + port + " >/dev/null"
	}
	cat := exec.Command("bash", "-c", read)
	if err := cat.Start(); err != nil {
		b.Skipf("no bash to read with: %v", err)
	}
	c, err := ln.Accept()
	if err != nil {
		b.Fatal(err)
	}
	f, err := c.(*net.TCPConn).File() // a blocking descriptor of its own
	c.Close()
	if err != nil {
		b.Fatal(err)
	}
	fd, err := unix.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	return fd, func() {
		if err := cat.Wait(); err != nil {
			b.Errorf("cat: %v", err)
		}
	}
}

// cpuUsed returns the CPU time the process has used, in nanoseconds, its threads' (the kernel's
// I/O workers among them) included.
func cpuUsed() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// sendfileChunk sends the chunk at off with as many sendfile calls as it takes: a signal (the
// runtime's preemption) can cut one short.
func sendfileChunk(_ *ring, sock int, _ [2]int, f *os.File, off int64, size int) (int, error) {
	sent := 0
	for sent < size {
		n, err := unix.Sendfile(sock, int(f.Fd()), &off, size-sent)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return sent, err
		}
		sent += n
	}
	return sent, nil
}

// The opcodes, flags and field the ring's two ways use beyond the poller's (linux/io_uring.h).
const (
	opRead     = 22     // IORING_OP_READ
	opSplice   = 30     // IORING_OP_SPLICE
	sqeLink    = 1 << 2 // IOSQE_IO_LINK: the next submission starts once this one has succeeded
	spliceFDIn = 44     // splice_fd_in's offset in an sqe: after buf_index and personality
	noOffset   = ^uint64(0)
	spliceMove = 1 // SPLICE_F_MOVE
)

func spliceChunk(r *ring, sock int, pipe [2]int, f *os.File, off int64, size int) (int, error) {
	in, e := r.next()
	if e != 0 {
		return 0, e
	}
	in.opcode, in.flags = opSplice, sqeLink
	in.fd, in.off = int32(pipe[1]), noOffset // into the pipe
	in.addr, in.len, in.opFlags = uint64(off), uint32(size), spliceMove
	*(*int32)(unsafe.Add(unsafe.Pointer(in), spliceFDIn)) = int32(f.Fd()) // from the file
	out, e := r.next()
	if e != 0 {
		return 0, e
	}
	out.opcode = opSplice
	out.fd, out.off = int32(sock), noOffset // to the socket
	out.addr, out.len, out.opFlags = noOffset, uint32(size), spliceMove
	*(*int32)(unsafe.Add(unsafe.Pointer(out), spliceFDIn)) = int32(pipe[0]) // from the pipe
	out.userData = 1
	return completeLinked(r)
}

func readSendChunk(r *ring, sock int, _ [2]int, f *os.File, off int64, size int) (int, error) {
	buf := readSendBuf[:size]
	rd, e := r.next()
	if e != 0 {
		return 0, e
	}
	rd.opcode, rd.flags = opRead, sqeLink
	rd.fd, rd.off = int32(f.Fd()), uint64(off)
	rd.addr, rd.len = uint64(uintptr(unsafe.Pointer(&buf[0]))), uint32(size)
	send, e := r.next()
	if e != 0 {
		return 0, e
	}
	send.opcode = opSend
	send.fd = int32(sock)
	send.addr, send.len, send.opFlags = uint64(uintptr(unsafe.Pointer(&buf[0]))), uint32(size), unix.MSG_WAITALL
	send.userData = 1
	return completeLinked(r)
}

// readSendBuf is where readSendChunk reads to and sends from: a package variable, so that the
// kernel writes to memory the collector never moves or frees.
var readSendBuf [fileSendMax]byte

// completeLinked submits a linked pair and waits for both ends, returning the second's result
// (its userData is 1).
func completeLinked(r *ring) (int, error) {
	if e := r.submit(2); e != 0 {
		return 0, e
	}
	for r.ready() < 2 {
		if e := r.submit(1); e != 0 {
			return 0, e
		}
	}
	n := 0
	for i := range uint32(2) {
		c := r.cqe(i)
		if c.res < 0 {
			r.consume(2)
			return 0, Errno(-c.res)
		}
		if c.userData == 1 {
			n = int(c.res)
		}
	}
	r.consume(2)
	return n, nil
}
