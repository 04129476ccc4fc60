package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/dwellhttp/dwell/wait"
)

// The change log is durable: every change is a row of the changes table, written in the
// transaction of the write it records, so that the log and the todos never disagree, and the
// topic that polls, streams and sockets follow continues it (wait.NewStoredTopic) — a process
// started again on the same database numbers on from the last stored change, and a client that
// comes back with a cursor from before gets exactly what it missed, read from the table:
//
//	write:  lock ─> BEGIN ─> the todo's row ─> INSERT change Last()+1 ─> prune ─> COMMIT ─> Publish ─> unlock
//	follow: cursor in memory (the last history changes) ─> the topic's ring, at once
//	        cursor older (a restart, a client long gone) ─> readChanges, on the worker pool
//
// A change is stored before it is published, under the store's lock, so that the topic's
// numbers are the table's and no client ever sees a change a crash could take back.

// changesSchema is the change log's table: seq is the topic's number, todo the todo's JSON as
// the change shows it.
const changesSchema = `
CREATE TABLE IF NOT EXISTS changes (
	seq  INTEGER PRIMARY KEY,
	op   TEXT    NOT NULL,
	todo TEXT    NOT NULL
)`

// keptChanges is how many changes the table keeps: older ones are deleted as new ones come, and
// a client whose cursor is older than all of them is told it missed some (and reads GET /todos
// again). At about 100 bytes a change, the log stays under a few megabytes; titles are bounded
// (maxTitle), so at worst about 100 MB.
const keptChanges = 100_000

// lastChange returns the sequence number of the last change stored, 0 for none: the topic's
// Store.Last.
func lastChange(ctx context.Context, db *sql.DB) (uint64, error) {
	var last uint64
	err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM changes`).Scan(&last)
	return last, err
}

// readChanges is the topic's Store.Read: the changes in (after, upto], oldest first, at most
// limit. Changes pruned from the table are reported as wait.ErrMissed, with those it has.
func (s *store) readChanges(ctx context.Context, after, upto uint64, limit int) ([]change, uint64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, op, todo FROM changes WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?`, after, upto, limit)
	if err != nil {
		return nil, after, err
	}
	defer rows.Close()
	var out []change
	last := after
	for rows.Next() {
		var ch change
		var data []byte
		if err := rows.Scan(&ch.Seq, &ch.Op, &data); err != nil {
			return nil, after, err
		}
		if err := json.Unmarshal(data, &ch.Todo); err != nil {
			return nil, after, fmt.Errorf("change %d: %w", ch.Seq, err)
		}
		out = append(out, ch)
		last = ch.Seq
	}
	if err := rows.Err(); err != nil {
		return nil, after, err
	}
	if len(out) > 0 && out[0].Seq != after+1 {
		return out, last, wait.ErrMissed // the first ones were pruned
	}
	return out, last, nil // none at all: the topic takes them as pruned too
}

// write makes a change: fn writes the todo's row in a transaction, which records the change
// (op, and the todo fn returns) as the next of the log; once committed, the change is
// published. The store's lock is held throughout, so that the log's numbers are the topic's.
//
// A write once begun is finished even if its request ends meanwhile (the client left, a
// shutdown): fn gets a context that is not cancelled with the request's, so that the check
// after a failed commit can still run — the client of a write cut short never knew its fate
// either way.
func (s *store) write(ctx context.Context, op string, fn func(ctx context.Context, tx *sql.Tx) (todo, error)) (todo, error) {
	ctx = context.WithoutCancel(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return todo{}, err
	}
	defer tx.Rollback() // after a commit, a no-op
	t, err := fn(ctx, tx)
	if err != nil {
		return todo{}, err
	}
	ch := change{Seq: s.changes.Last() + 1, Op: op, Todo: t}
	data, err := json.Marshal(ch.Todo)
	if err != nil {
		return todo{}, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO changes (seq, op, todo) VALUES (?, ?, ?)`, ch.Seq, ch.Op, data); err != nil {
		return todo{}, err
	}
	if ch.Seq > s.kept {
		if _, err := tx.ExecContext(ctx, `DELETE FROM changes WHERE seq <= ?`, ch.Seq-s.kept); err != nil {
			return todo{}, err
		}
	}
	if err := tx.Commit(); err != nil && !s.stored(ctx, ch.Seq) {
		return todo{}, err
	}
	// A change committed whatever Commit said is published all the same: its number is
	// taken, and the next write's would collide with it.
	if seq := s.changes.Publish(ch); seq != ch.Seq {
		panic(fmt.Sprintf("todo: change %d published as %d: something published outside the store's lock", ch.Seq, seq))
	}
	return t, nil
}

// stored reports whether change seq is in the table: after a commit that failed, whether it
// failed before the change was stored.
func (s *store) stored(ctx context.Context, seq uint64) bool {
	var one int
	err := s.db.QueryRowContext(ctx, `SELECT 1 FROM changes WHERE seq = ?`, seq).Scan(&one)
	return err == nil
}
