package main

import (
	"cmp"
	"slices"
	"sync"

	"github.com/dwellhttp/dwell/wait"
)

// A todo as the API shows it.
type todo struct {
	ID    int64  `json:"id"`
	Title string `json:"title"`
	Done  bool   `json:"done"`
}

// A change is one entry of the change log: what happened (op) to which todo, numbered by seq.
type change struct {
	Seq  uint64 `json:"seq"`
	Op   string `json:"op"` // create, update, delete or attach
	Todo todo   `json:"todo"`
}

// history is how many changes the log keeps for clients that come back with an old cursor.
const history = 1000

// A store keeps the todos in memory, and their changes on a topic that long polls and event
// streams follow. Its methods may be called from any loop.
type store struct {
	mu      sync.Mutex // guards todos and nextID, and orders the changes as they happened
	todos   map[int64]*item
	nextID  int64
	changes *wait.Topic[change]
}

// An item is a todo and what the store knows of its attachment.
type item struct {
	todo
	file *attachment // nil without one
}

func newStore() *store {
	return &store{todos: map[int64]*item{}, changes: wait.NewTopic[change](history)}
}

// list returns every todo, by id.
func (s *store) list() []todo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]todo, 0, len(s.todos))
	for _, it := range s.todos {
		out = append(out, it.todo)
	}
	slices.SortFunc(out, func(a, b todo) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// get returns the todo id and its attachment.
func (s *store) get(id int64) (todo, *attachment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.todos[id]
	if !ok {
		return todo{}, nil, false
	}
	return it.todo, it.file, true
}

func (s *store) create(title string, done bool) todo {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	t := todo{ID: s.nextID, Title: title, Done: done}
	s.todos[t.ID] = &item{todo: t}
	s.publish("create", t)
	return t
}

func (s *store) update(id int64, title string, done bool) (todo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.todos[id]
	if !ok {
		return todo{}, false
	}
	it.Title, it.Done = title, done
	s.publish("update", it.todo)
	return it.todo, true
}

// remove deletes the todo id and returns its attachment, for the caller to delete.
func (s *store) remove(id int64) (*attachment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.todos[id]
	if !ok {
		return nil, false
	}
	delete(s.todos, id)
	s.publish("delete", it.todo)
	return it.file, true
}

// attach gives the todo id the attachment f and returns the one it replaces, for the caller to
// delete; false when the todo is gone.
func (s *store) attach(id int64, f *attachment) (*attachment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.todos[id]
	if !ok {
		return nil, false
	}
	old := it.file
	it.file = f
	s.publish("attach", it.todo)
	return old, true
}

// publish appends a change to the log, numbered by the topic. Called with s.mu held, so that
// the log's order is the changes'.
func (s *store) publish(op string, t todo) {
	s.changes.PublishFunc(func(seq uint64) change { return change{Seq: seq, Op: op, Todo: t} })
}
