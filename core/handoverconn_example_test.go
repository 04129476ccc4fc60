package core_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/dwellhttp/dwell/core"
)

// A line protocol after an HTTP/1.1 Upgrade, served by a goroutine that reads and writes the
// connection as a net.Conn, as net/http's Hijack lets a handler do.
func ExampleCtx_HandOverConn() {
	url, stop := serve(func(c *core.Ctx) {
		c.SetStatus(101)
		c.SetHeader("Upgrade", "shout")
		c.SetHeader("Connection", "Upgrade")
		conn, err := c.HandOverConn()
		if err != nil {
			return // answered as HTTP
		}
		go func() {
			defer conn.Close()
			lines := bufio.NewScanner(conn)
			for lines.Scan() {
				fmt.Fprintf(conn, "%s!\n", strings.ToUpper(lines.Text()))
			}
		}()
	})
	defer stop()

	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "GET / HTTP/1.1\r\nHost: example\r\nUpgrade: shout\r\nConnection: Upgrade\r\n\r\nhello\n")
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		panic(err)
	}
	reply, _ := r.ReadString('\n')
	fmt.Print(resp.Status, "\n", reply)
	// Output:
	// 101 Switching Protocols
	// HELLO!
}

// A server that listens nowhere of its own, serving connections an acceptor of the program's
// hands it — here one that accepts on a listener it made itself.
func ExampleServer_ServeConn() {
	srv := core.NewServer(func(c *core.Ctx) {
		c.WriteString("served")
	}, core.Options{})
	go srv.Serve(nil)
	defer srv.Shutdown(context.Background())

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			srv.ServeConn(conn)
		}
	}()
	get("http://" + ln.Addr().String() + "/")
	// Output:
	// 200 OK "served"
}
