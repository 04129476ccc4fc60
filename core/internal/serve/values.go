package serve

import "context"

// A valueNode is one request-scoped value. The nodes form an immutable list, newest first, so
// that the request's Context can hand them to other goroutines while the loop adds more.
type valueNode struct {
	key, val any
	next     *valueNode
}

// A valueSlot is one request-scoped value kept inline in the Ctx's ctxRare, for a request whose
// Context does not exist yet.
type valueSlot struct {
	key, val any
}

// InlineValues is how many values a request keeps inline (ctxRare.inline) before SetValue
// allocates nodes: enough for a request id, a user and a middleware's or two of its own.
const InlineValues = 4

// SetValue attaches val to the request under key, as context.WithValue would: c.Value(key) and
// c.Context().Value(key) return it until the request ends. A later SetValue with an equal key
// shadows the earlier one. Keys follow context's rules: comparable, and of a type of the
// setter's own so that packages do not collide. It is the way for a middleware to hand
// something to the handler (the authenticated user, a request id). The first four values set
// before the request asks for its Context are kept in the Ctx and cost no allocation (a
// Context asked for later pays a small allocation for each); any other costs one.
func (cx *Ctx) SetValue(key, val any) {
	cx.check("SetValue")
	if key == nil {
		panic("dwell: nil key in SetValue")
	}
	r := cx.rare()
	rc := r.reqCtx
	if rc == nil && r.ninline < InlineValues {
		// The slots are the Ctx's, reused by its next request: only a request without a
		// Context may use them, as nothing another goroutine holds can reach them then. They
		// are made the first time the Ctx's requests need them, and kept: a Ctx whose requests
		// set no values (a parked long poll's, most often) does not carry them.
		if r.inline == nil {
			r.inline = new([InlineValues]valueSlot)
		}
		r.inline[r.ninline] = valueSlot{key, val}
		r.ninline++
		return
	}
	r.values = &valueNode{key: key, val: val, next: r.values}
	if rc != nil {
		rc.mu.Lock()
		rc.values = r.values
		rc.mu.Unlock()
	}
}

// Value returns the value SetValue attached to the request under key, or nil.
func (cx *Ctx) Value(key any) any {
	cx.check("Value")
	if cx.Extra == nil || cx.Extra.Rare == nil {
		return nil
	}
	r := cx.Extra.Rare
	// The nodes are newer than the inline values: a node exists before the Context only once
	// the slots are full, and the slots are moved into nodes when the Context is made.
	if v, ok := lookupValue(r.values, key); ok {
		return v
	}
	for i := int(r.ninline) - 1; i >= 0; i-- {
		if v, ok := matchValue(r.inline[i].key, r.inline[i].val, key); ok {
			return v
		}
	}
	return nil
}

// SetValuesFrom makes the values of ctx the request's as well: c.Value(key) and
// c.Context().Value(key) return ctx.Value(key) for a key that no later Ctx.SetValue shadows. It is
// for a middleware that hands the handler what a library stores in a context under a key of its own
// — a tracing span (trace.ContextWithSpan), baggage — so that code given c.Context() finds it. ctx
// carries only what to add: derive it from context.Background(), not from c.Context() (that panics,
// as a lookup through it would never end). Its cancellation is ignored.
func (s Seam) SetValuesFrom(ctx context.Context) {
	if ctx.Value(requestContextKey{}) != nil {
		panic("dwell: Seam.SetValuesFrom with a context derived from a request's: derive it from context.Background()")
	}
	s.cx.SetValue(valuesFrom{}, ctx)
}

// valuesFrom is the key of the node SetValuesFrom adds: its value is a context to ask.
type valuesFrom struct{}

// requestContextKey is a key a request's context answers with itself, so that SetValuesFrom
// can tell a context derived from one.
type requestContextKey struct{}

// moveInlineValues puts the inline values into nodes under those already made (which are
// newer) and empties the slots, for a Context being made: what it reaches must be the heap's,
// never the slots the Ctx's next request reuses. The nodes made before are linked to the new
// ones in place, as nothing but r holds them yet.
func (r *ctxRare) moveInlineValues() {
	if r.ninline == 0 {
		return
	}
	var old *valueNode
	for _, s := range r.inline[:r.ninline] {
		old = &valueNode{key: s.key, val: s.val, next: old}
	}
	if r.values == nil {
		r.values = old
	} else {
		n := r.values
		for n.next != nil {
			n = n.next
		}
		n.next = old
	}
	clear(r.inline[:r.ninline])
	r.ninline = 0
}

// lookupValue returns the value of the newest node of list n that answers key.
func lookupValue(n *valueNode, key any) (any, bool) {
	for ; n != nil; n = n.next {
		if v, ok := matchValue(n.key, n.val, key); ok {
			return v, true
		}
	}
	return nil, false
}

// matchValue reports whether the value val set under k answers key, and with what: val itself
// for an equal key, what the context of a SetValuesFrom holds under key.
func matchValue(k, val, key any) (any, bool) {
	if k == key {
		return val, true
	}
	if _, ok := k.(valuesFrom); ok {
		if v := val.(context.Context).Value(key); v != nil {
			return v, true
		}
	}
	return nil, false
}
