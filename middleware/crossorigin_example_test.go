package middleware_test

import (
	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/middleware"
	"github.com/dwellhttp/dwell/router"
)

// A form that another site's page posts is refused, as is one from a browser too old to send
// Sec-Fetch-Site whose Origin is not this host; the application's own pages, its trusted front
// end, programs such as curl, and the identity provider's post to the sign-in callback pass.
func ExampleCrossOrigin() {
	r := router.New()
	r.Use(middleware.CrossOrigin(middleware.CrossOriginOptions{
		TrustedOrigins: []string{"https://app.example"},
		Bypass:         []string{"POST /saml/acs"},
	}))
	r.POST("/transfer", func(c *core.Ctx) { c.WriteString("transferred") })
	r.POST("/saml/acs", func(c *core.Ctx) { c.WriteString("signed in") })
	url, stop := start(r.Handler())
	defer stop()

	do("POST", url+"/transfer", []string{"Sec-Fetch-Site: same-origin"})
	do("POST", url+"/transfer", []string{"Sec-Fetch-Site: cross-site", "Origin: https://evil.example"})
	do("POST", url+"/transfer", []string{"Origin: https://evil.example"})
	do("POST", url+"/transfer", []string{"Sec-Fetch-Site: cross-site", "Origin: https://app.example"})
	do("POST", url+"/transfer", nil)
	do("POST", url+"/saml/acs", []string{"Sec-Fetch-Site: cross-site", "Origin: https://idp.example"})
	// Output:
	// 200 OK | "transferred"
	// 403 Forbidden | "403 Forbidden: cross-origin request refused\n"
	// 403 Forbidden | "403 Forbidden: cross-origin request refused: its Origin is not this host\n"
	// 200 OK | "transferred"
	// 200 OK | "transferred"
	// 200 OK | "signed in"
}
