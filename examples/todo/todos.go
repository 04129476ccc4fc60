package main

import (
	"strconv"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/wait"
)

// list handles GET /todos.
func (a *app) list(c *core.Ctx) {
	body.WriteJSON(c, 200, a.todos.list())
}

// create handles POST /todos.
func (a *app) create(c *core.Ctx) {
	title, done, ok := a.readInput(c)
	if !ok {
		return
	}
	t := a.todos.create(title, done)
	c.SetHeader("Location", "/todos/"+strconv.FormatInt(t.ID, 10))
	body.WriteJSON(c, 201, t)
}

// show handles GET /todos/:id.
func (a *app) show(c *core.Ctx) {
	id, ok := todoID(c)
	if !ok {
		return
	}
	t, _, ok := a.todos.get(id)
	if !ok {
		notFound(c, id)
		return
	}
	body.WriteJSON(c, 200, t)
}

// update handles PUT /todos/:id, which replaces the todo's title and done.
func (a *app) update(c *core.Ctx) {
	id, ok := todoID(c)
	if !ok {
		return
	}
	if _, _, ok := a.todos.get(id); !ok {
		notFound(c, id) // before reading the body: a client sending one with 100-continue is spared
		return
	}
	title, done, ok := a.readInput(c)
	if !ok {
		return
	}
	t, ok := a.todos.update(id, title, done)
	if !ok {
		notFound(c, id) // deleted meanwhile
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
	f, ok := a.todos.remove(id)
	if !ok {
		notFound(c, id)
		return
	}
	if f != nil {
		wait.Do(c, func() { a.files.delete(f) })
	}
	c.SetStatus(204)
}
