// Command autocert serves HTTPS with certificates from Let's Encrypt, obtained and renewed as
// they are needed by golang.org/x/crypto/acme/autocert, on dwell's loops:
//
//	autocert -domain example.com -domain www.example.com -cache /var/lib/autocert
//
// The HTTPS server (-addr, :443) takes its tls.Config from autocert.Manager.TLSConfig: its
// GetCertificate answers each handshake with the certificate for the name the client asked for
// (SNI), getting one from Let's Encrypt on the first handshake for a name of -domain, and its
// ALPN protocols include acme-tls/1, for the TLS-ALPN-01 challenge (dwell keeps it, and drops
// h2, since it speaks HTTP/1.1 only). A name that is not one of -domain fails the handshake.
//
// The plain HTTP listener (-http, :80, where Let's Encrypt looks), a second listener of the same
// server (core.Server.AddListener), answers the HTTP-01 challenge
// (GET /.well-known/acme-challenge/TOKEN) with autocert's own handler, a net/http one served
// through the router's bridge (router.HandleHTTP), and sends every other request to HTTPS with
// router.RedirectToHTTPSAddr: 301 for GET and HEAD, 308 for other methods.
//
// Certificates and the ACME account key are kept in -cache, so that a restart does not ask for
// them again (Let's Encrypt limits how often it issues one); -staging uses Let's Encrypt's
// staging environment, whose certificates no browser trusts but whose limits are generous, to
// try a set-up out. Running it means accepting Let's Encrypt's terms of service.
//
// It prints "listening https://ADDR" and "redirecting http://ADDR" once both listen, and shuts
// the server, both listeners, down on SIGINT or SIGTERM.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/dwellhttp/dwell/core"
	"github.com/dwellhttp/dwell/router"
	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"
)

// stagingURL is the directory of Let's Encrypt's staging environment.
const stagingURL = "https://acme-staging-v02.api.letsencrypt.org/directory"

func main() {
	var cfg config
	flag.Func("domain", "a domain name to serve and get a certificate for (repeat, or separate with commas; at least one)", func(s string) error {
		for d := range strings.SplitSeq(s, ",") {
			if d = strings.TrimSpace(d); d != "" {
				cfg.domains = append(cfg.domains, d)
			}
		}
		return nil
	})
	flag.StringVar(&cfg.cache, "cache", "autocert-cache", "directory the certificates and the ACME account key are kept in")
	flag.StringVar(&cfg.email, "email", "", "contact address Let's Encrypt writes to about the certificates (optional)")
	flag.BoolVar(&cfg.staging, "staging", false, "use Let's Encrypt's staging environment (certificates no browser trusts)")
	flag.StringVar(&cfg.addr, "addr", ":443", "HTTPS address to listen on")
	flag.StringVar(&cfg.httpAddr, "http", ":80", "plain HTTP address to listen on: ACME HTTP-01 challenges, and redirects to HTTPS")
	flag.IntVar(&cfg.loops, "loops", 0, "number of event loops (0: one per CPU)")
	flag.Parse()
	if len(cfg.domains) == 0 {
		fmt.Fprintln(os.Stderr, "autocert: give at least one -domain")
		flag.Usage()
		os.Exit(2)
	}

	s, err := listen(cfg)
	if err != nil {
		log.Fatal(err)
	}
	// Signals are caught before the server says it is ready, so that one sent right after the
	// announcement shuts it down gracefully rather than killing it.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	addrs := s.srv.Addrs()
	fmt.Printf("listening https://%s\n", addrs[0])
	fmt.Printf("redirecting http://%s\n", addrs[1])

	go func() {
		<-stop
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.shutdown(ctx)
	}()
	if err := s.serve(); err != nil {
		log.Fatal(err)
	}
}

// config is the command line.
type config struct {
	domains        []string
	cache, email   string
	staging        bool
	addr, httpAddr string
	loops          int
}

// A service is the server, with its HTTPS listener and the plain one beside it, and the
// Manager behind both.
type service struct {
	manager *autocert.Manager
	srv     *core.Server
}

// listen makes the Manager and the server, and has both of its listeners listen.
func listen(cfg config) (*service, error) {
	m := &autocert.Manager{
		Prompt:     autocert.AcceptTOS,
		Cache:      autocert.DirCache(cfg.cache),
		HostPolicy: autocert.HostWhitelist(cfg.domains...),
		Email:      cfg.email,
	}
	if cfg.staging {
		m.Client = &acme.Client{DirectoryURL: stagingURL}
	}
	srv := core.NewServer(routes(), core.Options{Addr: cfg.addr, Loops: cfg.loops, TLSConfig: m.TLSConfig()})
	if err := srv.AddListener(core.Listener{Addr: cfg.httpAddr, Handler: plainRoutes(m, srv.Addr)}); err != nil {
		return nil, err
	}
	if err := srv.Listen(); err != nil {
		return nil, err
	}
	return &service{manager: m, srv: srv}, nil
}

// routes is what the HTTPS server serves: a page that says how it was reached.
func routes() core.Handler {
	r := router.New()
	r.GET("/", func(c *core.Ctx) {
		c.SetHeader("Content-Type", "text/plain; charset=utf-8")
		c.SetHeader("Strict-Transport-Security", "max-age=86400")
		st := c.TLS()
		fmt.Fprintf(c, "Hello over %s, %s, for %s\n", c.Scheme(), tls.VersionName(st.Version), st.ServerName)
	})
	return r.Handler()
}

// plainRoutes is what the plain listener serves: the HTTP-01 challenges, which autocert's own
// net/http handler answers (it checks the Host against the Manager's HostPolicy, and answers
// the tokens of the challenges under way, kept in the cache), and a redirect to the HTTPS
// listener's port, which httpsAddr tells once it listens, for everything else.
func plainRoutes(m *autocert.Manager, httpsAddr func() net.Addr) core.Handler {
	r := router.New()
	r.HandleHTTP("GET", "/.well-known/acme-challenge/:token", m.HTTPHandler(nil))
	r.NotFound = router.RedirectToHTTPSAddr(httpsAddr)
	r.MethodNotAllowed = r.NotFound
	return r.Handler()
}

// serve serves until the server is shut down.
func (s *service) serve() error {
	if err := s.srv.ListenAndServe(); !errors.Is(err, core.ErrServerClosed) {
		return err
	}
	return nil
}

// shutdown shuts the server down, both listeners, waiting until ctx is done for requests still
// running.
func (s *service) shutdown(ctx context.Context) {
	if err := s.srv.Shutdown(ctx); err != nil {
		log.Printf("shutdown: %v", err)
	}
}
