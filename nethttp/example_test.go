package nethttp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/nethttp"
)

// A net/http handler as a dwell handler, here the server's only one: it runs on a goroutine of
// its own and streams the request body back as it comes. (With a router, HandleHTTP and Mount
// register net/http handlers on routes.)
func ExampleHandler() {
	echo := nethttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.Copy(w, r.Body)
	}))
	s := core.NewServer(echo, core.Options{Addr: "127.0.0.1:0"})
	if err := s.Listen(); err != nil {
		panic(err)
	}
	go s.ListenAndServe()
	defer s.Shutdown(context.Background())

	resp, err := http.Post("http://"+s.Addr().String()+"/", "text/plain", strings.NewReader("echoed"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, string(b))
	// Output:
	// 200 OK echoed
}

// A net/http handler that hijacks its connection, as WebSocket libraries do: from Hijack on,
// the connection's bytes are the handler's, read and written through a net.Conn that the loop
// serves. Here it answers each line with the line in upper case, until the client leaves.
func ExampleHandler_hijack() {
	upper := nethttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: upper\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		for {
			line, err := brw.ReadString('\n')
			if err != nil {
				return
			}
			brw.WriteString(strings.ToUpper(line))
			brw.Flush()
		}
	}))
	s := core.NewServer(upper, core.Options{Addr: "127.0.0.1:0"})
	if err := s.Listen(); err != nil {
		panic(err)
	}
	go s.ListenAndServe()
	defer s.Shutdown(context.Background())

	conn, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	fmt.Fprint(conn, "GET / HTTP/1.1\r\nHost: example\r\nUpgrade: upper\r\nConnection: Upgrade\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil) // the switch, as a WebSocket client waits for it
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Fprint(conn, "hello\n")
	line, _ := br.ReadString('\n')
	fmt.Print(resp.Status, " ", line)
	// Output:
	// 101 Switching Protocols HELLO
}
