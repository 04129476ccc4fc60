package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/dwellhttp/dwell/wait"
)

// maxText bounds a message's text, in bytes, whichever way it is published.
const maxText = 4 << 10

// A message is one of the feed's messages: its number and its text.
type message struct {
	Seq  uint64 `json:"seq"`
	Text string `json:"text"`
}

// A messageLog is where the feed's messages live, and the topic that follows them. It stands
// for the application's database: every message is appended to a file of JSON lines when the
// server has one (-log), so that messages and their numbers outlive a restart, and is kept in
// memory too, for the topic's reads. The topic keeps the last history messages itself and
// reads older cursors from the log (wait.NewStoredTopic), so that a client that comes back
// after a restart with its cursor misses nothing.
type messageLog struct {
	mu    sync.Mutex
	file  *os.File  // nil: the messages live in memory alone
	msgs  []message // message n is msgs[n-1]
	topic *wait.Topic[message]
}

// openLog reads the log in path (made when missing; "" for none) and returns it with its topic,
// which keeps history messages in memory.
func openLog(path string, history int) (*messageLog, error) {
	l := &messageLog{}
	if path != "" {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		if err := l.load(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		l.file = f
	}
	l.topic = wait.NewStoredTopic(history, wait.Store[message]{Last: uint64(len(l.msgs)), Read: l.read})
	return l, nil
}

// load reads the messages of f, which must be numbered 1, 2, 3, ... in order.
func (l *messageLog) load(f *os.File) error {
	sc := bufio.NewScanner(f)
	// A line is a message's JSON: its text escaped at worst, 6 bytes a byte ("<" is \u003c, a
	// byte of no UTF-8 \ufffd), and the rest of the message.
	sc.Buffer(nil, 6*maxText+256)
	for sc.Scan() {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return fmt.Errorf("line %d: %w", len(l.msgs)+1, err)
		}
		if m.Seq != uint64(len(l.msgs))+1 {
			return fmt.Errorf("line %d: message %d, want %d", len(l.msgs)+1, m.Seq, len(l.msgs)+1)
		}
		l.msgs = append(l.msgs, m)
	}
	return sc.Err()
}

// publish stores text as the next message and publishes it, and returns its number. It is
// stored first, under the log's lock, so that the topic's numbers are the log's and no client
// sees a message that is not stored. It writes to the file: call it from a goroutine, or from a
// handler through wait.Call, not on a loop.
func (l *messageLog) publish(text string) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := message{Seq: l.topic.Last() + 1, Text: text}
	if l.file != nil {
		line, err := json.Marshal(m)
		if err != nil {
			return 0, err
		}
		if _, err := l.file.Write(append(line, '\n')); err != nil {
			return 0, err
		}
	}
	l.msgs = append(l.msgs, m)
	return l.topic.Publish(m), nil
}

// read is the topic's Store.Read: the messages in (after, upto], at most limit of them.
func (l *messageLog) read(_ context.Context, after, upto uint64, limit int) ([]message, uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	upto = min(upto, after+uint64(limit), uint64(len(l.msgs)))
	if after >= upto {
		return nil, after, nil
	}
	return slices.Clone(l.msgs[after:upto]), upto, nil
}

// close closes the file.
func (l *messageLog) close() error {
	if l.file == nil {
		return nil
	}
	return l.file.Close()
}
