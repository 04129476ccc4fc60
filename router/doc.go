// Package router sends dwell requests to handlers by method and path. Routes with parameters
// live on the radix tree of github.com/julienschmidt/httprouter (v1.3.0), which stays hidden
// behind this package; routes without parameters live in a table of their own, looked up
// first:
//
//	r := router.New()
//	r.GET("/users/:id", show)
//	r.GET("/users/new", form) // beside :id: wins for /users/new
//	s := core.NewServer(r.Handler(), core.Options{Addr: ":8080"})
//
// # Patterns
//
// A pattern is literal text with, optionally, parameters and one final catch-all:
//
//	/users/:id          matches /users/42 (id "42"), not /users/42/posts nor /users/
//	/files/*path        matches /files/ and /files/a/b.txt (path "/" and "/a/b.txt")
//	/users/new          matches /users/new only, even beside /users/:id
//
// A parameter takes one path segment, a catch-all the rest of the path; handlers read them with
// c.Param(name), or c.Bytes().Param(name) without a copy. Matching runs on the request's decoded
// path (core.Ctx.Path), so an escaped slash ("%2F") separates segments like a plain one.
//
// A route without parameters (a static route) may sit beside a parameter or a catch-all at the
// same position, and wins for its own path: with /todos/:id, /todos/changes, /static/*path and
// /static/app.css registered, /todos/changes and /static/app.css reach their static routes,
// /todos/7 and /static/app.js the others. A static route matches its exact path only:
// /todos/changes/x is routed as if /todos/changes were not there (to /todos/:id/x, if it is
// registered).
//
// A group serves its own prefix through the empty pattern: Group("/todos").GET("", h) registers
// /todos, and GET("/", h) registers /todos/.
//
// # Methods
//
// GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS have methods of their own; Handle takes any
// method token (REPORT, PROPFIND), and Any registers a handler for every method. A request
// reaches the routes of its own method first, then, for HEAD, those of GET (core sends no body
// for HEAD and still computes the Content-Length), then the Any routes. So GET /x beside
// Any /x serves GET and HEAD from the first and every other method from the second. An Any
// route answers OPTIONS too where it matches (no automatic reply there, unless an OPTIONS route
// takes it back), and a path it matches never gets 405. CONNECT requests carry an authority,
// not a path, and match no route.
//
// # Conflicts
//
// A static route collides only with itself. The routes with parameters share httprouter's
// tree, which keeps one kind of child per position: a fixed segment, or a parameter of one
// name, or a catch-all. So "/users/:id" cannot live beside "/users/:name/posts" (two names),
// nor beside "/users/new/:tab" (a fixed segment in a route with parameters), nor "/files/*path"
// beside "/files/:name". Each method has its routes to itself, and Any routes theirs.
// Registration is start-up code, as for http.ServeMux, so such a route panics at once with a
// message that starts "dwell: route conflict:", names both routes, and says how to get out; an
// invalid pattern panics with "dwell: invalid route pattern". Either means the program's route
// table must change, never the request.
//
// # What a request meets
//
// A request whose method and path match a route runs its handler, as Methods says. A request
// that matches nothing, with the defaults of New, is redirected when its path matches with the
// trailing slash toggled, or once cleaned and compared case-insensitively (301 for GET and
// HEAD, 308 otherwise; a static route is preferred to a parameter there too); else an OPTIONS
// request gets an automatic reply with an Allow header (and GlobalOPTIONS); else a path that
// other methods match gets 405 with an Allow header (or MethodNotAllowed); else 404 (or
// NotFound). Static routes and routes with parameters count alike in all of these. The 404 and
// 405 are written as the server writes its own refusals when the application gave it a format
// (core.Options.WriteRefusal: middleware.JSONRefusal answers them in JSON), and as plain text
// otherwise.
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
// Middleware reads what served the request, already set when it runs: Ctx.Route is the
// pattern that matched ("/todos/:id"), "" for the router's own replies (as OpenTelemetry's
// http.route is left unset then); Seam.RouteLabel is the pattern too, and for the router's own
// replies a label saying which — LabelRedirect, LabelOptions, LabelMethodNotAllowed,
// LabelNotFound — for metrics that count every request under some label.
//
// Each route is wrapped once, when Handler is called, never per request. Middleware runs in
// the handler's coroutine, so it may park like the handler: read the body, wait on the wait
// package, write to a slow client.
//
// # net/http handlers
//
// Package nethttp runs an http.Handler as a dwell handler, on a goroutine of a bounded pool,
// with its request and response streaming through the loop; HandleHTTP registers one for a
// route, with the route's parameters as its path values, and Mount for a whole subtree
// (net/http/pprof under /debug/pprof, say):
//
//	r.Mount("/debug/pprof", debugMux)
//	r.HandleHTTP("GET", "/debug/vars", expvar.Handler())
//
// # Borrowed values
//
// Parameter values are substrings of the request's path, which the router hands the Ctx
// without a copy: c.Param returns an owned copy, c.Bytes().Param the borrowed bytes, valid
// until the handler returns (across parks included) and reused afterwards.
package router
