package jetstream

import (
	"errors"
	"fmt"
)

// ErrUnavailable means that NATS did not do what the topic asked: a message was not stored (no
// connection, no acknowledgement in time, a full stream), or history could not be read from the
// stream. The error returned wraps it together with the cause. A handler answers it with 503
// Service Unavailable: a refused message is never stored later, so the client may send it again.
var ErrUnavailable = errors.New("dwell/jetstream: NATS is unavailable")

// unavailable wraps the cause of a failed request to NATS.
func unavailable(err error) error {
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}
