// Package router sends dwell requests to handlers by method and path, on the radix tree of
// github.com/julienschmidt/httprouter (v1.3.0), which stays hidden behind this package:
//
//	r := router.New()
//	r.GET("/users/:id", show)
//	s := core.NewServer(r.Handler(), core.Options{Addr: ":8080"})
//
// # Patterns
//
// A pattern is literal text with, optionally, parameters and one final catch-all:
//
//	/users/:id          matches /users/42 (id "42"), not /users/42/posts nor /users/
//	/files/*path        matches /files/ and /files/a/b.txt (path "/" and "/a/b.txt")
//
// A parameter takes one path segment, a catch-all the rest of the path; Param reads them.
// Matching runs on the request's decoded path (core.Ctx.Path), so an escaped slash ("%2F")
// separates segments like a plain one.
//
// # Conflicts
//
// httprouter keeps one kind of child per position in its tree: a fixed segment, or a named
// parameter, or a catch-all. So "/users/new" cannot live beside "/users/:id", nor
// "/users/:id" beside "/users/:name/posts". Registration is start-up code, as for
// http.ServeMux, so such a route panics at once with a message that starts
// "dwell: route conflict:", names both routes, and says how to get out; an invalid pattern
// panics with "dwell: invalid route pattern". Either means the program's route table must
// change, never the request.
//
// # What a request meets
//
// A request whose method and path match a route runs its handler. HEAD requests use the GET
// route when no HEAD route matches (core sends no body for HEAD and still computes the
// Content-Length). A request that matches nothing, with the defaults of New, is redirected
// when its path matches with the trailing slash toggled, or once cleaned and compared
// case-insensitively (301 for GET and HEAD, 308 otherwise); else an OPTIONS request gets an
// automatic reply with an Allow header (and GlobalOPTIONS); else a path that other methods
// match gets 405 with an Allow header (or MethodNotAllowed); else 404 (or NotFound).
//
// # Middleware
//
// Middleware is a func(core.Handler) core.Handler. Router.Use applies to every route and to
// the router's own replies; Group.Use to the routes of the group and of its nested groups.
// The first middleware given to Use is the outermost, the router's outside the groups':
//
//	r.Use(a, b)
//	g := r.Group("/api")
//	g.Use(c)
//	g.GET("/x", h)  // a(b(c(h)))
//
// Each route is wrapped once, when Handler is called, never per request. Middleware runs in
// the handler's coroutine, so it may park like the handler: read the body, wait on the wait
// package, write to a slow client.
//
// # net/http handlers
//
// HTTPHandler runs an http.Handler as a dwell handler, on a goroutine of a bounded pool, with
// its request and response streaming through the loop; HandleHTTP registers one for a route,
// Mount for a whole subtree (net/http/pprof under /debug/pprof, say):
//
//	r.Mount("/debug/pprof", debugMux)
//	r.HandleHTTP("GET", "/debug/vars", expvar.Handler())
//
// # Borrowed values
//
// Parameter values are substrings of the request's path: they are valid until the handler
// returns, across parks included, and are reused afterwards. Copy what you keep
// (strings.Clone).
package router
