package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sync"

	"github.com/dwellhttp/dwell/wait"

	_ "modernc.org/sqlite" // the "sqlite" driver: SQLite in pure Go
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

// history is how many changes the topic keeps in memory; clients with older cursors are
// answered from the database (changelog.go).
const history = 1000

// A store keeps the todos and their change log in a SQLite database, and publishes each change
// on a topic that long polls, event streams and sockets follow: both survive a restart. Its
// methods block on the database: handlers call them through wait.Call, which runs them on a
// worker and ends the wait with the request (each takes the request's context).
type store struct {
	db *sql.DB
	// mu orders the writes with their changes: a change is stored and published in the order
	// its write was made, so a client following the log sees the database's own order.
	mu      sync.Mutex
	changes *wait.Topic[change]
	kept    uint64 // changes the table keeps: keptChanges
}

// errNotFound is what the store returns for a todo that does not exist.
var errNotFound = errors.New("no such todo")

// schema is created at start when the file is new; it is what a migration tool would keep.
const schema = `
CREATE TABLE IF NOT EXISTS todos (
	id     INTEGER PRIMARY KEY AUTOINCREMENT,
	title  TEXT    NOT NULL,
	done   INTEGER NOT NULL DEFAULT 0,
	file   TEXT,             -- the attachment's file in -dir, NULL without one
	size   INTEGER,
	sha256 TEXT
)`

// openStore opens (or creates) the database file path and its schema, and makes the change
// topic continue the log stored there. It blocks: main calls it before the server starts.
func openStore(ctx context.Context, path string) (*store, error) {
	// WAL lets readers go on while a write commits; the busy timeout makes a write wait for
	// another rather than fail; foreign keys are off in SQLite unless asked.
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	for _, ddl := range []string{schema, changesSchema} {
		if _, err := db.ExecContext(ctx, ddl); err != nil {
			db.Close()
			return nil, fmt.Errorf("creating the schema in %s: %w", path, err)
		}
	}
	last, err := lastChange(ctx, db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("reading the change log in %s: %w", path, err)
	}
	s := &store{db: db, kept: keptChanges}
	s.changes = wait.NewStoredTopic(history, wait.Store[change]{Last: last, Read: s.readChanges})
	return s, nil
}

// close closes the database.
func (s *store) close() error { return s.db.Close() }

// list returns every todo, by id.
func (s *store) list(ctx context.Context) ([]todo, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, title, done FROM todos ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []todo{}
	for rows.Next() {
		var t todo
		if err := rows.Scan(&t.ID, &t.Title, &t.Done); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// stored is a todo and its attachment, as get finds them.
type stored struct {
	todo
	file *attachment // nil without one
}

// A querier is the database or a transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// get returns the todo id and its attachment, or errNotFound.
func (s *store) get(ctx context.Context, id int64) (stored, error) { return getIn(ctx, s.db, id) }

// getIn is get in the database or a transaction.
func getIn(ctx context.Context, q querier, id int64) (stored, error) {
	var st stored
	var file, sum sql.NullString
	var size sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT id, title, done, file, size, sha256 FROM todos WHERE id = ?`, id).
		Scan(&st.ID, &st.Title, &st.Done, &file, &size, &sum)
	if errors.Is(err, sql.ErrNoRows) {
		return stored{}, errNotFound
	}
	if file.Valid {
		st.file = &attachment{name: file.String, size: size.Int64, sha256: sum.String}
	}
	return st, err
}

func (s *store) create(ctx context.Context, title string, done bool) (todo, error) {
	return s.write(ctx, "create", func(ctx context.Context, tx *sql.Tx) (todo, error) {
		t := todo{Title: title, Done: done}
		err := tx.QueryRowContext(ctx, `INSERT INTO todos (title, done) VALUES (?, ?) RETURNING id`, title, done).Scan(&t.ID)
		return t, err
	})
}

func (s *store) update(ctx context.Context, id int64, title string, done bool) (todo, error) {
	return s.write(ctx, "update", func(ctx context.Context, tx *sql.Tx) (todo, error) {
		res, err := tx.ExecContext(ctx, `UPDATE todos SET title = ?, done = ? WHERE id = ?`, title, done, id)
		return todo{ID: id, Title: title, Done: done}, affectedOne(res, err)
	})
}

// remove deletes the todo id and returns its attachment, for the caller to delete.
func (s *store) remove(ctx context.Context, id int64) (*attachment, error) {
	var file *attachment
	_, err := s.write(ctx, "delete", func(ctx context.Context, tx *sql.Tx) (todo, error) {
		st, err := getIn(ctx, tx, id)
		if err != nil {
			return todo{}, err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM todos WHERE id = ?`, id)
		file = st.file
		return st.todo, affectedOne(res, err)
	})
	if err != nil {
		return nil, err
	}
	return file, nil
}

// attach gives the todo id the attachment f and returns the one it replaces, for the caller to
// delete; errNotFound when the todo is gone.
func (s *store) attach(ctx context.Context, id int64, f *attachment) (*attachment, error) {
	var old *attachment
	_, err := s.write(ctx, "attach", func(ctx context.Context, tx *sql.Tx) (todo, error) {
		st, err := getIn(ctx, tx, id)
		if err != nil {
			return todo{}, err
		}
		res, err := tx.ExecContext(ctx, `UPDATE todos SET file = ?, size = ?, sha256 = ? WHERE id = ?`, f.name, f.size, f.sha256, id)
		old = st.file
		return st.todo, affectedOne(res, err)
	})
	if err != nil {
		return nil, err
	}
	return old, nil
}

// affectedOne turns an Exec's result into errNotFound when it changed no row.
func affectedOne(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return errNotFound
	}
	return nil
}
