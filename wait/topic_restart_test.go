package wait

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
)

// A stored topic across a restart: a process whose topic continues a history kept in a file,
// killed and started again, and a client that comes back with a cursor from before.

const storedProcessEnv = "DWELL_WAIT_STORED_PROCESS"

// A fileLog is the store of the process: one line per message, "seq<TAB>text", appended in
// the topic's order; a message is in the file before it is published.
type fileLog struct {
	path string
	mu   sync.Mutex // orders the appends with their publishes
}

// last returns the sequence number of the last message in the file (0 for none).
func (l *fileLog) last() (uint64, error) {
	msgs, err := l.lines()
	if err != nil || len(msgs) == 0 {
		return 0, err
	}
	return msgs[len(msgs)-1].seq, nil
}

type logLine struct {
	seq  uint64
	text string
}

func (l *fileLog) lines() ([]logLine, error) {
	b, err := os.ReadFile(l.path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	var out []logLine
	for line := range bytes.Lines(b) {
		if !bytes.HasSuffix(line, []byte("\n")) {
			break // being appended: not published yet
		}
		seq, text, ok := strings.Cut(strings.TrimSuffix(string(line), "\n"), "\t")
		n, err := strconv.ParseUint(seq, 10, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s: bad line %q", l.path, line)
		}
		out = append(out, logLine{n, text})
	}
	return out, err
}

// Read is the Store's: the lines in (after, upto], at most limit.
func (l *fileLog) Read(_ context.Context, after, upto uint64, limit int) ([]string, uint64, error) {
	lines, err := l.lines()
	if err != nil {
		return nil, after, err
	}
	var out []string
	last := after
	for _, m := range lines {
		if m.seq > after && m.seq <= upto && len(out) < limit {
			out = append(out, m.text)
			last = m.seq
		}
	}
	return out, last, nil
}

// publish appends text to the file, then publishes it, and returns its number.
func (l *fileLog) publish(tp *Topic[string], text string) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.OpenFile(l.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	_, err = fmt.Fprintf(f, "%d\t%s\n", tp.Last()+1, text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err // not stored: not published
	}
	return tp.Publish(text), nil
}

// TestStoredTopicProcess is the process of TestStoredTopicRestart; on its own it does nothing.
// It serves a topic that continues the file named by its environment, with a history of 3 in
// memory: POST /publish?m=TEXT stores and publishes a message and answers its number; GET
// /?after=N&ms=T answers Topic.Next's "last:m1,m2,...;err". It prints its address and runs
// until it is killed or its standard input closes.
func TestStoredTopicProcess(t *testing.T) {
	path := os.Getenv(storedProcessEnv)
	if path == "" {
		t.Skip("runs only as the process of TestStoredTopicRestart")
	}
	log := &fileLog{path: path}
	last, err := log.last()
	if err != nil {
		t.Fatal(err)
	}
	tp := NewStoredTopic(3, Store[string]{Last: last, Read: log.Read})
	poll := pollHandler(tp)
	s, _ := coretest.Serve(t, func(c *core.Ctx) {
		if c.Path() != "/publish" {
			poll(c)
			return
		}
		text := c.Query("m")
		var seq uint64
		var perr error
		if err := Do(c, func() { seq, perr = log.publish(tp, text) }); err != nil {
			return
		}
		if perr != nil {
			c.SetStatus(500)
			c.WriteString(perr.Error())
			return
		}
		c.WriteString(strconv.FormatUint(seq, 10))
	}, core.Options{Loops: 2})
	fmt.Printf("listening http://%s\n", s.Addr())
	os.Stdin.Read(make([]byte, 1))
}

// startStored starts TestStoredTopicProcess over the file path and returns it and its address.
func startStored(t *testing.T, path string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStoredTopicProcess$")
	cmd.Env = append(os.Environ(), storedProcessEnv+"="+path)
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
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening http://")
	if err != nil || !ok {
		t.Fatalf("the process said %q (%v)", line, err)
	}
	go io.Copy(io.Discard, stdout)
	return cmd, addr
}

// publishTo publishes text through the process at addr and returns its number.
func publishTo(t *testing.T, addr, text string) uint64 {
	t.Helper()
	c := dial(t, addr)
	c.Send("POST /publish?m=" + text + " HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
	resp, body := c.Response("POST")
	c.Close()
	seq, err := strconv.ParseUint(body, 10, 64)
	if resp.StatusCode != 200 || err != nil {
		t.Fatalf("publishing %s: %d %q", text, resp.StatusCode, body)
	}
	return seq
}

// TestStoredTopicRestart: a process whose topic continues a history kept in a file is killed
// (SIGKILL: a crash) and started again over the same file. The new process numbers its
// messages after the old one's, and a client that comes back with a cursor from before the
// crash gets exactly what it missed — the old process's messages after its cursor, from the
// file, then the new process's, from memory — none twice, none lost, in order.
func TestStoredTopicRestart(t *testing.T) {
	path := t.TempDir() + "/log"
	first, addr := startStored(t, path)
	for i := 1; i <= 5; i++ {
		if seq := publishTo(t, addr, fmt.Sprintf("a%d", i)); seq != uint64(i) {
			t.Fatalf("a%d numbered %d", i, seq)
		}
	}
	// The client reads a1 and a2 (the first answer, from the file: the memory holds a3..a5).
	if got := roundTrip(t, addr, "/?after=0&ms=60000"); got != "2:a1,a2;nil" {
		t.Fatalf("the client's first poll: %q", got)
	}
	cursor := uint64(2)
	first.Process.Kill()
	first.Wait()

	_, addr = startStored(t, path)
	for i := 6; i <= 7; i++ {
		if seq := publishTo(t, addr, fmt.Sprintf("b%d", i)); seq != uint64(i) {
			t.Fatalf("after the restart, b%d numbered %d", i, seq)
		}
	}
	var got []string
	for cursor < 7 {
		r := roundTrip(t, addr, fmt.Sprintf("/?after=%d&ms=60000", cursor))
		head, errText, _ := strings.Cut(r, ";")
		last, msgs, _ := strings.Cut(head, ":")
		n, err := strconv.ParseUint(last, 10, 64)
		if err != nil || errText != "nil" || n <= cursor {
			t.Fatalf("after %d: %q", cursor, r)
		}
		got = append(got, strings.Split(msgs, ",")...)
		cursor = n
	}
	if want := "a3 a4 a5 b6 b7"; strings.Join(got, " ") != want {
		t.Fatalf("the client missed %q, want %q", got, want)
	}
	if r := roundTrip(t, addr, "/?after=7&ms=20"); r != "7:;"+ErrTimeout.Error() {
		t.Fatalf("then: %q", r)
	}
}
