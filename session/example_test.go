package session_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/router"
	"github.com/dwellhttp/dwell/session"
)

// Signing in saves a session, which the browser sends back on the requests that follow, until
// signing out clears it. The client here is net/http's, with a cookie jar for the browser.
func Example() {
	type Login struct {
		User string `json:"user"`
	}
	// A real server reads its keys from its secrets, the same on every instance, so that
	// sessions outlive a restart; a key made at start-up signs everyone out on each.
	key := make([]byte, session.KeySize)
	rand.Read(key)
	sessions, err := session.New[Login](session.Options{
		Keys:     [][]byte{key},
		Insecure: true, // only because this example serves http:// on the loopback: keep Secure
	})
	if err != nil {
		panic(err)
	}

	r := router.New()
	r.Use(middleware.CrossOrigin(middleware.CrossOriginOptions{})) // SameSite=Lax is not enough alone
	r.POST("/login", func(c *core.Ctx) {
		user := c.Query("user") // a real server checks a password first
		// A new session, not one loaded and added to, so that none planted before survives.
		if err := sessions.Save(c, Login{User: user}); err != nil {
			middleware.TextError(c, 500, "the session could not be saved")
			return
		}
		c.WriteString("welcome, " + user)
	})
	r.GET("/me", func(c *core.Ctx) {
		login, err := sessions.Load(c)
		if err != nil { // no cookie, one not ours, or one expired: all mean "not signed in"
			middleware.TextError(c, 403, "sign in first") // 401 would need a WWW-Authenticate scheme
			return
		}
		c.WriteString("signed in as " + login.User)
	})
	r.POST("/logout", func(c *core.Ctx) {
		sessions.Clear(c)
		c.WriteString("signed out")
	})

	s := core.NewServer(r.Handler(), core.Options{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err := s.Listen(); err != nil {
		panic(err)
	}
	go s.ListenAndServe()
	defer s.Shutdown(context.Background())
	url := "http://" + s.Addr().String()

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	do := func(method, path string) {
		req, _ := http.NewRequest(method, url+path, nil)
		resp, err := browser.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		fmt.Printf("%s %s: %s | %s\n", method, path, resp.Status, strings.TrimSpace(string(b)))
	}
	do("GET", "/me")
	do("POST", "/login?user=ada")
	do("GET", "/me")
	do("POST", "/logout")
	do("GET", "/me")
	// Output:
	// GET /me: 403 Forbidden | 403 Forbidden: sign in first
	// POST /login?user=ada: 200 OK | welcome, ada
	// GET /me: 200 OK | signed in as ada
	// POST /logout: 200 OK | signed out
	// GET /me: 403 Forbidden | 403 Forbidden: sign in first
}
