// Package wait lets a handler wait — on a timer, an event, the next message of a topic, or a
// blocking call — parking only itself: the handler's coroutine is suspended, its loop goes on
// serving every other connection, and the handler resumes on its own loop when the wait ends.
//
// # The rule
//
// A loop runs all its handlers on one goroutine. A handler that blocks its thread — a blocking
// system call, a database driver, time.Sleep, a channel receive, a mutex held by someone slow —
// stalls every connection of its loop until it returns. Run such calls through Call, which hands
// them to a bounded worker pool, parks the handler until they return and gives it their value
// and error (or ends the wait when the request ends first), or Do, for a function that returns
// nothing and shares variables with the handler; wait for time with Sleep, and for other
// goroutines with an Event or a Topic.
//
// # How a wait ends
//
// Every wait ends promptly with a result or with one of ErrTimeout (its deadline passed),
// ErrClosed (the client went away), ErrShutdown (a shutdown's grace period ended) or
// core.ErrDeadline (the request's own deadline, core.Ctx.SetTimeout, passed). When it
// ends, whatever it held — the coroutine's park, the loop timer, the entry in a waiter list — is
// released at once, so clients that give up cost nothing afterwards.
//
// The path of a wake-up: Event.Fire or Topic.Publish, from any goroutine, posts one task to each
// loop that has waiters and has none pending (a burst of publishes costs one post per loop);
// the task runs on that loop, unlinks the waiters the publish concerns from the loop's own list
// and makes their handlers ready; the loop resumes them at the top of its next iteration.
// Waiter lists are per loop and touched only by their loop, and a waiter is a node of a few
// words, removed in O(1) when its wait times out or its client leaves.
//
// That machinery is a Sequence: a number that only grows, and the handlers waiting for it to
// pass their cursor. Event and Topic are built on it, and so can be a topic whose messages live
// elsewhere (a broker's stream): the goroutine that receives them calls Sequence.Advance with
// the last one's number, and handlers wait with Sequence.Wait or OnWait.
//
// # Two styles
//
// The coroutine style (Sleep, Event.Wait, Topic.Next, Sequence.Wait, Call, Do) reads like blocking
// code: the function returns when the wait is over. A parked handler costs its connection, its
// request and its coroutine: about 3.5 KB of live memory (TestFootprint measures it), of which
// this package's waiter node is five words (40 bytes). Keep the handler's frame small: a large local (a 4 KiB
// array, say) gives every parked coroutine a larger stack.
//
// The continuation style (After, Topic.OnNext, Sequence.OnWait) is for extreme fan-in: the
// handler returns at once and a continuation k finishes the response later, on the loop, so a
// waiting request costs its connection and a few words, about 0.5 KB. k runs outside any
// coroutine: it cannot park (no Sleep, Next, Do or body reads; writes past the high-water mark
// queue up instead of waiting), and the request's values (path, headers, query) are gone
// once the handler returns, so copy what k needs before that.
//
// # From a goroutine
//
// A goroutine that is not a dwell handler — a net/http handler behind the bridge, a gRPC
// server stream, a worker — waits with the Context forms, Topic.NextContext,
// Event.WaitContext and Sequence.WaitContext: they block the goroutine until there is something
// or its context ends, with the same cursors and errors as the handler's waits (ctx.Err() in
// place of ErrTimeout, ErrClosed and ErrShutdown). The goroutines waiting on a Sequence share
// one channel, which the next advance closes; no loop is involved and dwell starts no goroutine
// for them. From a dwell handler, use the handler's forms: blocking its goroutine blocks its
// loop.
//
// Functions taking a *core.Ctx must be called from that request's handler; After, Topic.OnNext
// and Sequence.OnWait may also be called from a continuation, to wait again. Event.Fire,
// Topic.Publish and Sequence.Advance may be called from anywhere.
package wait
