package core

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

func lookupValue(n *valueNode, key any) any {
	for ; n != nil; n = n.next {
		if n.key == key {
			return n.val
		}
	}
	return nil
}
