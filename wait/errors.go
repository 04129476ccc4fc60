package wait

import (
	"errors"

	"github.com/dwellhttp/dwell/core"
)

// Errors a wait ends with. The first three are core's own values, so a handler can compare with
// either package's names.
var (
	// ErrClosed means the client went away while the handler waited.
	ErrClosed = core.ErrClosed
	// ErrShutdown means the server is shutting down and its grace period has ended.
	ErrShutdown = core.ErrShutdown
	// ErrTimeout means the wait's timeout passed first.
	ErrTimeout = core.ErrTimeout
	// ErrMissed is returned by Topic.Next and given to Topic.OnNext's continuation, together with
	// messages, when the caller's cursor is older than the topic's history: the messages are all
	// that is kept, and some published after the cursor are gone. It wraps nothing; treat it as
	// a success that lost data (resynchronise, warn the user).
	ErrMissed = errors.New("dwell: cursor older than the topic's history; messages were missed")
	// ErrGoexit is returned by Do when its function called runtime.Goexit: the function ended
	// without returning.
	ErrGoexit = errors.New("dwell: runtime.Goexit in a function run by wait.Do")
)
