package main

import (
	"cmp"
	"context"
	"errors"
	"strconv"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/wait"
)

// Every handler reaches the database through wait.Call: the query runs on a worker with the
// request's context, the handler parks meanwhile (its loop serves everyone else), and the wait
// ends with the request — a client that left, a shutdown — so that nothing waits for a query
// nobody needs.

// list handles GET /todos.
func (a *app) list(c *core.Ctx) {
	todos, err := wait.Call(c, a.todos.list)
	if a.failed(c, 0, err) {
		return
	}
	body.WriteJSON(c, 200, todos)
}

// create handles POST /todos.
func (a *app) create(c *core.Ctx) {
	title, done, ok := a.readInput(c)
	if !ok {
		return
	}
	t, err := wait.Call(c, func(ctx context.Context) (todo, error) { return a.todos.create(ctx, title, done) })
	if a.failed(c, 0, err) {
		return
	}
	c.SetHeader("Location", "/todos/"+strconv.FormatInt(t.ID, 10))
	body.WriteJSON(c, 201, t)
}

// show handles GET /todos/:id.
func (a *app) show(c *core.Ctx) {
	id, ok := todoID(c)
	if !ok {
		return
	}
	st, err := a.get(c, id)
	if a.failed(c, id, err) {
		return
	}
	body.WriteJSON(c, 200, st.todo)
}

// update handles PUT /todos/:id, which replaces the todo's title and done.
func (a *app) update(c *core.Ctx) {
	id, ok := todoID(c)
	if !ok {
		return
	}
	// Before reading the body: a client sending one with 100-continue is spared it.
	if _, err := a.get(c, id); a.failed(c, id, err) {
		return
	}
	title, done, ok := a.readInput(c)
	if !ok {
		return
	}
	t, err := wait.Call(c, func(ctx context.Context) (todo, error) { return a.todos.update(ctx, id, title, done) })
	if a.failed(c, id, err) { // errNotFound: deleted meanwhile
		return
	}
	body.WriteJSON(c, 200, t)
}

// remove handles DELETE /todos/:id, and deletes the attachment's file.
func (a *app) remove(c *core.Ctx) {
	id, ok := todoID(c)
	if !ok {
		return
	}
	// wait.Do, not wait.Call: the deletion once begun is finished even if the client leaves,
	// and its attachment's file must then go too (see upload).
	ctx := c.Context()
	var f *attachment
	removeErr := errNotRun
	err := wait.Do(c, func() { f, removeErr = a.todos.remove(ctx, id) })
	if f != nil {
		wait.Do(c, func() { a.files.delete(f) })
	}
	if a.failed(c, id, cmp.Or(err, removeErr)) {
		return
	}
	c.SetStatus(204)
}

// errNotRun is the outcome of a store's call that wait.Do did not run (called from outside
// the request), until it runs.
var errNotRun = errors.New("the call did not run")

// get reads the todo id and its attachment.
func (a *app) get(c *core.Ctx, id int64) (stored, error) {
	return wait.Call(c, func(ctx context.Context) (stored, error) { return a.todos.get(ctx, id) })
}

// failed answers a store's error, if there is one, and reports whether there was: 404 for a
// todo that does not exist, nothing for a request that ended meanwhile (the client left, a
// shutdown, a deadline: the server answers what is left to answer), and 500 for the database
// failing, which is logged.
func (a *app) failed(c *core.Ctx, id int64, err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, errNotFound):
		notFound(c, id)
	case ended(err):
	default:
		a.logger.Error("the database failed", "error", err.Error())
		fail(c, 500, "the database failed")
	}
	return true
}

// ended reports whether err is a request's end rather than a failure: the client left, a
// shutdown, a deadline, or a query cancelled with the request's context for one of them.
func ended(err error) bool {
	return errors.Is(err, core.ErrClosed) || errors.Is(err, core.ErrShutdown) ||
		errors.Is(err, core.ErrDeadline) || errors.Is(err, context.Canceled)
}
