package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/google/uuid"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/wait"
)

// A store keeps uploaded files in dir, each named by its id.
type store struct {
	dir string
}

// tempPrefix marks files still being uploaded. It cannot be mistaken for an id, which is a
// UUID, so a partial upload is never served.
const tempPrefix = ".upload-"

// pieceSize is how much of the body is gathered before it goes to the disk: large enough that
// the hand-off to a worker is paid rarely, small enough that an upload costs little memory.
const pieceSize = 256 << 10

var pieces = sync.Pool{New: func() any { return new([pieceSize]byte) }}

// upload stores the request body under a new id and answers its size and SHA-256.
func (s *store) upload(c *core.Ctx) {
	if c.BodyErr() != nil {
		return // declared over the limit: the server answers 413, and no file is made
	}
	id := uuid.NewString()
	tmp := filepath.Join(s.dir, tempPrefix+id)
	var f *os.File
	var err error
	if werr := wait.Do(c, func() { f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644) }); werr != nil || err != nil {
		if f != nil {
			// The client left or the server is stopping: the file is not wanted.
			wait.Do(c, func() { f.Close(); os.Remove(tmp) })
		}
		internalError(c, errors.Join(werr, err))
		return
	}
	h := sha256.New()
	size, err := receive(c, f, h)
	var cerr error
	wait.Do(c, func() {
		cerr = f.Close()
		if err == nil && cerr == nil {
			cerr = os.Rename(tmp, filepath.Join(s.dir, id))
		}
		if err != nil || cerr != nil {
			os.Remove(tmp)
		}
	})
	switch {
	case err != nil:
		// A body error (too large, malformed, the client gone) is answered by the server
		// itself; a disk error is ours.
		if errors.Is(err, errDisk) {
			internalError(c, err)
		}
		return
	case cerr != nil:
		internalError(c, cerr)
		return
	}
	out, _ := json.Marshal(struct {
		ID     string `json:"id"`
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
	}{id, size, hex.EncodeToString(h.Sum(nil))})
	c.SetStatus(201)
	c.SetHeader("Location", "/files/"+id)
	c.SetHeader("Content-Type", "application/json")
	c.Write(append(out, '\n'))
}

// errDisk marks a failure to write the file, as opposed to one to read the body.
var errDisk = errors.New("upload: writing the file failed")

// receive copies the request body into f, hashing it on the way, and returns its size. Each
// piece is gathered on the loop, straight from the socket, then hashed and written by a worker:
// neither the hashing nor the disk holds up the loop's other connections.
func receive(c *core.Ctx, f *os.File, h hash.Hash) (int64, error) {
	bp := pieces.Get().(*[pieceSize]byte)
	defer pieces.Put(bp)
	var size int64
	for {
		n, rerr := fill(c, bp[:])
		if n > 0 {
			piece := bp[:n]
			var werr error
			if err := wait.Do(c, func() {
				h.Write(piece)
				_, werr = f.Write(piece)
			}); err != nil {
				return size, err
			}
			if werr != nil {
				return size, errors.Join(errDisk, werr)
			}
			size += int64(n)
		}
		if rerr == io.EOF {
			return size, nil
		}
		if rerr != nil {
			return size, rerr
		}
	}
}

// fill reads body bytes until buf is full or the body ends.
func fill(c *core.Ctx, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := c.ReadBody(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// download sends a stored file. Only a well-formed id is looked up, so no request can name
// anything but a finished upload.
func (s *store) download(c *core.Ctx) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		c.SetStatus(404)
		c.WriteString("404 Not Found\n")
		return
	}
	// Whatever was uploaded is served as opaque bytes, never as a page a browser would run.
	c.SetHeader("Content-Type", "application/octet-stream")
	c.SetHeader("X-Content-Type-Options", "nosniff")
	body.ServeFile(c, filepath.Join(s.dir, id.String()))
}

// internalError answers 500 unless the response has started or the client is gone.
func internalError(c *core.Ctx, err error) {
	if c.ResponseStarted() || errors.Is(err, core.ErrClosed) {
		return
	}
	c.SetStatus(500)
	c.SetHeader("Connection", "close") // the rest of the body will not be read
	c.WriteString("500 Internal Server Error\n")
}
