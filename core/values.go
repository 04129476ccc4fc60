package core

import "context"

// A valueNode is one request-scoped value. The nodes form an immutable list, newest first, so
// that the request's Context can hand them to other goroutines while the loop adds more.
type valueNode struct {
	key, val any
	next     *valueNode
}

// SetValue attaches val to the request under key, as context.WithValue would: c.Value(key) and
// c.Context().Value(key) return it until the request ends. A later SetValue with an equal key
// shadows the earlier one. Keys follow context's rules: comparable, and of a type of the
// setter's own so that packages do not collide. It is the way for a middleware to hand
// something to the handler (the authenticated user, a request id). It costs one small
// allocation.
func (cx *Ctx) SetValue(key, val any) {
	cx.check("SetValue")
	if key == nil {
		panic("dwell: nil key in SetValue")
	}
	r := cx.rare()
	r.values = &valueNode{key: key, val: val, next: r.values}
	if rc := r.reqCtx; rc != nil {
		rc.mu.Lock()
		rc.values = r.values
		rc.mu.Unlock()
	}
}

// Value returns the value SetValue attached to the request under key, or nil.
func (cx *Ctx) Value(key any) any {
	cx.check("Value")
	if cx.x == nil || cx.x.rare == nil {
		return nil
	}
	return lookupValue(cx.x.rare.values, key)
}

// SetValuesFrom makes the values of ctx the request's as well: c.Value(key) and
// c.Context().Value(key) return ctx.Value(key) for a key that no later SetValue shadows. It is
// for a middleware that hands the handler what a library stores in a context under a key of its
// own — a tracing span (trace.ContextWithSpan), baggage — so that code given c.Context() finds
// it. ctx carries only what to add: derive it from context.Background(), not from c.Context()
// (that panics, as a lookup through it would never end). Its cancellation is ignored.
func (cx *Ctx) SetValuesFrom(ctx context.Context) {
	if ctx.Value(requestContextKey{}) != nil {
		panic("dwell: SetValuesFrom with a context derived from a request's: derive it from context.Background()")
	}
	cx.SetValue(valuesFrom{}, ctx)
}

// valuesFrom is the key of the node SetValuesFrom adds: its value is a context to ask.
type valuesFrom struct{}

// requestContextKey is a key a request's context answers with itself, so that SetValuesFrom
// can tell a context derived from one.
type requestContextKey struct{}

func lookupValue(n *valueNode, key any) any {
	for ; n != nil; n = n.next {
		if n.key == key {
			return n.val
		}
		if _, ok := n.key.(valuesFrom); ok {
			if v := n.val.(context.Context).Value(key); v != nil {
				return v
			}
		}
	}
	return nil
}
