// Command dwell-ws is dwell's WebSocket benchmark server, on the routes of package wspeer, in
// one of three styles (-style):
//
//   - event (the default): websocket.Serve with Events; the echo is Send from Events.Message,
//     the broadcast a websocket.Group's Broadcast of a PreparedMessage, framed once;
//   - seq: websocket.Accept, the handler reading with ReadMessage and answering with
//     WriteMessage, parked in ReadMessage between messages; the broadcast's handler joins the
//     same kind of Group and parks in ReadMessage;
//   - bridge: gorilla/websocket's handlers of package gorillaws (the same as servers/gorilla-ws),
//     on dwell through router.HandleHTTP: net/http's Hijack, served by the loop.
//
// permessage-deflate is accepted on /echo-deflate without context takeover (Options.Compress,
// ContextTakeover false: the server asks the client not to carry its window either), messages
// of 128 bytes and more compressed. A broadcast client that lets more than wspeer.QueueBytes of
// output wait is closed (Options.MaxQueued, CloseSlowClient).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/dwellhttp/dwell/bench/internal/gorillaws"
	"github.com/dwellhttp/dwell/bench/internal/peer"
	"github.com/dwellhttp/dwell/bench/internal/wspeer"
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/router"
	"github.com/dwellhttp/dwell/websocket"
)

var (
	plainOpts   = &websocket.Options{}
	deflateOpts = &websocket.Options{Compress: true}
	bcastOpts   = &websocket.Options{MaxQueued: wspeer.QueueBytes}
)

func main() {
	style := flag.String("style", "event", "event, seq or bridge")
	addr := wspeer.ParseFlags()
	r := router.New()
	r.GET("/hello", func(c *core.Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString(wspeer.Hello)
	})
	var send func([]byte)
	switch *style {
	case "event":
		send = eventRoutes(r)
	case "seq":
		send = seqRoutes(r)
	case "bridge":
		hub := gorillaws.NewHub()
		r.HandleHTTP("GET", "/echo", gorillaws.Echo(false))
		r.HandleHTTP("GET", "/echo-deflate", gorillaws.Echo(true))
		r.HandleHTTP("GET", "/broadcast", hub)
		send = hub.Send
	default:
		fmt.Fprintf(os.Stderr, "-style is event, seq or bridge, not %q\n", *style)
		os.Exit(2)
	}
	r.GET("/start", func(c *core.Ctx) {
		p, err := wspeer.ParsePlan(c.Query)
		if err != nil {
			c.SetStatus(400)
			c.WriteString(err.Error())
			return
		}
		p.Start(send)
		c.WriteString("ok")
	})
	srv := core.NewServer(r.Handler(), core.Options{Addr: addr})
	if err := srv.Listen(); err != nil {
		log.Fatal(err)
	}
	go func() {
		if err := srv.ListenAndServe(); err != core.ErrServerClosed {
			log.Fatal(err)
		}
	}()
	peer.Ready(srv.Addr().String())
	peer.WaitForStop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
}

// echoEvents answer every message with itself, queued from the loop.
var echoEvents = &websocket.Events{
	Message: func(c *websocket.Conn, typ websocket.MessageType, data []byte) { c.Send(typ, data) },
}

// eventRoutes registers the event style's routes and returns the broadcast's send.
func eventRoutes(r *router.Router) func([]byte) {
	var g websocket.Group
	join := &websocket.Events{Open: g.Add}
	r.GET("/echo", func(c *core.Ctx) { websocket.Serve(c, plainOpts, echoEvents) })
	r.GET("/echo-deflate", func(c *core.Ctx) { websocket.Serve(c, deflateOpts, echoEvents) })
	r.GET("/broadcast", func(c *core.Ctx) { websocket.Serve(c, bcastOpts, join) })
	return func(p []byte) { g.Broadcast(websocket.NewPreparedMessage(websocket.Binary, p)) }
}

// seqRoutes registers the sequential style's routes and returns the broadcast's send.
func seqRoutes(r *router.Router) func([]byte) {
	var g websocket.Group
	echo := func(o *websocket.Options) core.Handler {
		return func(c *core.Ctx) {
			ws, err := websocket.Accept(c, o)
			if err != nil {
				return
			}
			for {
				typ, msg, err := ws.ReadMessage()
				if err != nil {
					return
				}
				if err := ws.WriteMessage(typ, msg); err != nil {
					return
				}
			}
		}
	}
	r.GET("/echo", echo(plainOpts))
	r.GET("/echo-deflate", echo(deflateOpts))
	r.GET("/broadcast", func(c *core.Ctx) {
		ws, err := websocket.Accept(c, bcastOpts)
		if err != nil {
			return
		}
		g.Add(ws)
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	})
	return func(p []byte) { g.Broadcast(websocket.NewPreparedMessage(websocket.Binary, p)) }
}
