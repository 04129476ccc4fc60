package main

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dwellhttp/dwell/body"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/core/coretest"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/router"
	"github.com/dwellhttp/dwell/session"
	"github.com/dwellhttp/dwell/wait"
)

// glue is what a service built on dwell had to write by hand — JSON for the server's own 413, a
// database call that returns a value, a session with protection against cross-site request
// forgery — rebuilt on what dwell has now: 31 lines where the service had 91.
func glue(db *sql.DB, sessions *session.Store[string]) (core.Handler, core.Options) {
	r := router.New()
	r.Use(middleware.CrossOrigin(middleware.CrossOriginOptions{Error: middleware.JSONError}))
	r.POST("/login/:user", func(c *core.Ctx) {
		if sessions.Save(c, c.Param("user")) == nil {
			c.SetStatus(204)
		}
	})
	r.POST("/notes", func(c *core.Ctx) {
		if _, err := sessions.Load(c); err != nil {
			middleware.JSONError(c, 401, "sign in first")
			return
		}
		c.Seam().LimitBody(16) // over it, the server's 413, in JSON (WriteRefusal)
		if _, err := io.Copy(io.Discard, body.Reader(c)); err == nil {
			c.SetStatus(201)
		}
	})
	r.GET("/users/:id", func(c *core.Ctx) {
		id := c.Param("id")
		name, err := wait.Call(c, func(ctx context.Context) (name string, err error) {
			return name, db.QueryRowContext(ctx, "SELECT name FROM users WHERE id = ?", id).Scan(&name)
		})
		if err != nil {
			middleware.JSONError(c, 404, "no such user")
			return
		}
		c.WriteString(name)
	})
	return r.Handler(), core.Options{WriteRefusal: middleware.JSONRefusal}
}

// TestGlue checks the glue's three cases.
func TestGlue(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+t.TempDir()+"/glue.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES (7, 'ada')`); err != nil {
		t.Fatal(err)
	}
	sessions, err := session.New[string](session.Options{Keys: [][]byte{[]byte(strings.Repeat("k", 32))}, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	h, o := glue(db, sessions)
	c := coretest.NewClient(t, h, o)
	send := func(method, target, body string, fields ...string) (*http.Response, string) {
		req := coretest.NewRequest(method, target, strings.NewReader(body))
		for _, f := range fields {
			k, v, _ := strings.Cut(f, ": ")
			req.Header.Set(k, v)
		}
		resp := c.Do(req)
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	if resp, body := send("GET", "/users/7", ""); resp.StatusCode != 200 || body != "ada" {
		t.Errorf("a value from the database: %d %q", resp.StatusCode, body)
	}
	if resp, _ := send("POST", "/notes", "hi"); resp.StatusCode != 401 {
		t.Errorf("a note without a session: %d", resp.StatusCode)
	}
	resp, _ := send("POST", "/login/ada", "")
	cookie := "Cookie: " + strings.Split(resp.Header.Get("Set-Cookie"), ";")[0]
	if resp, body := send("POST", "/notes", "hi", cookie); resp.StatusCode != 201 {
		t.Errorf("a note with the session: %d %q", resp.StatusCode, body)
	}
	resp, body := send("POST", "/notes", strings.Repeat("x", 100), cookie)
	if resp.StatusCode != 413 || resp.Header.Get("Content-Type") != "application/json" || body != `{"error":"request body too large"}`+"\n" {
		t.Errorf("the server's 413: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if resp, body := send("POST", "/notes", "hi", cookie, "Sec-Fetch-Site: cross-site"); resp.StatusCode != 403 {
		t.Errorf("a cross-site note with the session: %d %q", resp.StatusCode, body)
	}
}
