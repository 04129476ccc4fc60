package cookie_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/dwellhttp/dwell/cookie"
	"github.com/dwellhttp/dwell/core"
)

func Example() {
	s := core.NewServer(func(c *core.Ctx) {
		ck, err := cookie.Get(c, "session")
		if errors.Is(err, http.ErrNoCookie) {
			cookie.Set(c, &http.Cookie{Name: "session", Value: "s1", Path: "/", MaxAge: 3600,
				HttpOnly: true, SameSite: http.SameSiteLaxMode})
			c.WriteString("welcome")
			return
		}
		c.WriteString("welcome back, " + ck.Value)
	}, core.Options{Addr: "127.0.0.1:0"})
	if err := s.Listen(); err != nil {
		panic(err)
	}
	go s.ListenAndServe()
	defer s.Shutdown(context.Background())
	url := "http://" + s.Addr().String() + "/"

	resp, err := http.Get(url)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Header.Get("Set-Cookie"))

	req, _ := http.NewRequest("GET", url, nil)
	req.AddCookie(resp.Cookies()[0])
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(string(b))
	// Output:
	// session=s1; Path=/; Max-Age=3600; HttpOnly; SameSite=Lax
	// welcome back, s1
}
