package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/wait"
)

// maxAttachment is the largest attachment accepted, in bytes: 1 GiB.
const maxAttachment = 1 << 30

// attachments keeps the files in a directory. Every upload gets a file of its own, named by a
// UUID, so that a replaced attachment's file can be deleted without a race with its successor,
// and a partial upload goes under a temporary name that no request can name.
type attachments struct {
	dir string
}

// An attachment is one stored file.
type attachment struct {
	name   string // in attachments.dir
	size   int64
	sha256 string // hex
}

// tempPrefix marks files still being uploaded.
const tempPrefix = ".upload-"

// openAttachments prepares dir, removing the temporary files of uploads that a previous run did
// not finish.
func openAttachments(dir string) (*attachments, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return &attachments{dir: dir}, nil
}

// delete removes f's file. It blocks: call it in wait.Do.
func (s *attachments) delete(f *attachment) { os.Remove(filepath.Join(s.dir, f.name)) }

// upload handles POST /todos/:id/attachment: the body is streamed to a temporary file — each
// piece read on the loop and written, and hashed, by a worker (body.Copy) — then renamed, and
// only a body that arrived whole is stored: 201 {"size", "sha256"}. A body that failed (cut
// short, over the limit) is answered by the server itself and leaves no file.
func (a *app) upload(c *core.Ctx) {
	id, ok := todoID(c)
	if !ok {
		return
	}
	// Before the body is read: a client sending one with 100-continue is spared it.
	if _, err := a.get(c, id); a.failed(c, id, err) {
		return
	}
	f, err := a.files.receive(c)
	if err != nil {
		if c.BodyErr() == nil && !errors.Is(err, core.ErrClosed) {
			fail(c, 500, "the attachment could not be stored")
			a.logger.Error("storing an attachment", "error", err.Error())
		}
		return
	}
	// wait.Do, not wait.Call: a write once begun is finished even if the client leaves (see
	// store.write), and which file to delete depends on its outcome, which Call would not wait
	// for.
	ctx := c.Context()
	var old *attachment
	attachErr := errNotRun
	err = wait.Do(c, func() { old, attachErr = a.todos.attach(ctx, id, f) })
	if attachErr != nil {
		wait.Do(c, func() { a.files.delete(f) }) // the todo was deleted meanwhile, or the database failed
		a.failed(c, id, cmp.Or(err, attachErr))
		return
	}
	if old != nil {
		wait.Do(c, func() { a.files.delete(old) })
	}
	if a.failed(c, id, err) { // the request ended meanwhile: the attachment stands, unanswered
		return
	}
	c.SetHeader("Location", "/todos/"+strconv.FormatInt(id, 10)+"/attachment")
	body.WriteJSON(c, 201, struct {
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256"`
	}{f.size, f.sha256})
}

// receive stores the request body as a new file, or removes what it wrote of it.
func (s *attachments) receive(c *core.Ctx) (*attachment, error) {
	name := uuid.NewString()
	tmp := filepath.Join(s.dir, tempPrefix+name)
	var file *os.File
	var err error
	if werr := wait.Do(c, func() { file, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644) }); err != nil || werr != nil {
		if file != nil {
			wait.Do(c, func() { file.Close(); os.Remove(tmp) })
		}
		return nil, errors.Join(werr, err)
	}
	h := sha256.New()
	size, err := body.Copy(c, io.MultiWriter(file, h), body.Reader(c))
	// Only a nil error means the whole body arrived: io.ErrUnexpectedEOF (the client stopped
	// early), a body over the limit or a disk error all leave a truncated file, never kept.
	var cerr error
	wait.Do(c, func() {
		cerr = file.Close()
		if err == nil && cerr == nil {
			cerr = os.Rename(tmp, filepath.Join(s.dir, name))
		}
		if err != nil || cerr != nil {
			os.Remove(tmp)
		}
	})
	if err = errors.Join(err, cerr); err != nil {
		return nil, err
	}
	return &attachment{name: name, size: size, sha256: hex.EncodeToString(h.Sum(nil))}, nil
}

// download handles GET /todos/:id/attachment: the file with Range, conditional requests and an
// ETag that is its SHA-256, as opaque bytes a browser saves rather than runs.
func (a *app) download(c *core.Ctx) {
	id, ok := todoID(c)
	if !ok {
		return
	}
	st, err := a.get(c, id)
	if a.failed(c, id, err) {
		return
	}
	f := st.file
	if f == nil {
		fail(c, 404, "todo "+strconv.FormatInt(id, 10)+" has no attachment")
		return
	}
	c.SetHeader("ETag", `"`+f.sha256+`"`)
	c.SetHeader("Content-Type", "application/octet-stream")
	c.SetHeader("Content-Disposition", "attachment")
	c.SetHeader("X-Content-Type-Options", "nosniff")
	body.ServeFile(c, filepath.Join(a.files.dir, f.name))
}
