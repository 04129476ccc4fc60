// Package middleware holds the middleware most services put in front of their handlers:
// an access log, panic recovery, request ids, the client's address behind proxies, CORS,
// protection against cross-site request forgery (CrossOrigin), gzip compression, a deadline, a
// body limit, and bearer and basic authentication; and JSONRefusal, the server's own answers
// in JSON.
//
// Each is a func(core.Handler) core.Handler, for router.Router.Use and router.Group.Use or to
// wrap a handler by hand; those with settings are made by a function that takes them. Each
// works for handlers that answer in their coroutine and for those that finish in a
// continuation (core.Ctx.Detach, wait.After, wait.Topic.OnNext) alike, because each builds on
// the core's hooks rather than on the handler returning: the access log on core.Ctx.OnDone,
// which reports what really went out whoever wrote it (the server's own 413 or 503 included),
// recovery on core.Seam.OnPanic, compression on core.Seam.WrapBody, the deadline on
// core.Ctx.SetTimeout and the body limit on core.Seam.LimitBody. Header fields a middleware
// sets before the handler runs (X-Request-Id, CORS) stay on the server's own error answers.
//
// A usual stack, outermost first:
//
//	r := router.New()
//	r.Use(
//		middleware.AssignRequestID,             // X-Request-Id, first so that everything sees it
//		middleware.AccessLog(logger),           // one line per response, with the request id
//		middleware.Recover(middleware.JSONError), // a panic answers 500 as JSON
//		middleware.CORS(middleware.CORSOptions{Origins: []string{"https://app.example"}}),
//		middleware.CrossOrigin(middleware.CrossOriginOptions{TrustedOrigins: []string{"https://app.example"}}),
//		middleware.Compress(middleware.CompressOptions{}),
//	)
//
// Values a middleware hands to the handler travel as request values (core.Ctx.SetValue), read
// with this package's functions (RequestID, ClientIP, BasicUser) or through c.Context().Value
// with the exported keys.
//
// Middleware that refuses a request (BearerAuth, BasicAuth) or answers a panic (Recover) writes
// its answer with an ErrorFunc: TextError, JSONError, or one of the application's own.
package middleware
