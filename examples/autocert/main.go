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
// The plain HTTP server (-http, :80, where Let's Encrypt looks) answers the HTTP-01 challenge
// (GET /.well-known/acme-challenge/TOKEN) with autocert's own handler, a net/http one served
// through the router's bridge (router.HandleHTTP), and sends every other request to HTTPS with
// router.RedirectToHTTPS: 301 for GET and HEAD, 308 for other methods.
//
// Certificates and the ACME account key are kept in -cache, so that a restart does not ask for
// them again (Let's Encrypt limits how often it issues one); -staging uses Let's Encrypt's
// staging environment, whose certificates no browser trusts but whose limits are generous, to
// try a set-up out. Running it means accepting Let's Encrypt's terms of service.
//
// It prints "listening https://ADDR" and "redirecting http://ADDR" once both listen, and shuts
// both down on SIGINT or SIGTERM.
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
	flag.IntVar(&cfg.loops, "loops", 0, "number of event loops of the HTTPS server (0: one per CPU)")
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
	// Signals are caught before the servers say they are ready, so that one sent right after
	// the announcement shuts them down gracefully rather than killing them.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	fmt.Printf("listening https://%s\n", s.https.Addr())
	fmt.Printf("redirecting http://%s\n", s.http.Addr())

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

// servers are the HTTPS server and the plain one beside it, and the Manager behind both.
type servers struct {
	manager     *autocert.Manager
	https, http *core.Server
}

// listen makes the Manager and both servers, and has them listen.
func listen(cfg config) (*servers, error) {
	m := &autocert.Manager{
		Prompt:     autocert.AcceptTOS,
		Cache:      autocert.DirCache(cfg.cache),
		HostPolicy: autocert.HostWhitelist(cfg.domains...),
		Email:      cfg.email,
	}
	if cfg.staging {
		m.Client = &acme.Client{DirectoryURL: stagingURL}
	}
	https := core.NewServer(routes(), core.Options{Addr: cfg.addr, Loops: cfg.loops, TLSConfig: m.TLSConfig()})
	if err := https.Listen(); err != nil {
		return nil, err
	}
	_, port, err := net.SplitHostPort(https.Addr().String())
	if err != nil {
		return nil, err
	}
	plain := core.NewServer(plainRoutes(m, port), core.Options{Addr: cfg.httpAddr})
	if err := plain.Listen(); err != nil {
		https.Shutdown(context.Background())
		return nil, err
	}
	return &servers{manager: m, https: https, http: plain}, nil
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

// plainRoutes is what the plain server serves: the HTTP-01 challenges, which autocert's own
// net/http handler answers (it checks the Host against the Manager's HostPolicy, and answers
// the tokens of the challenges under way, kept in the cache), and a redirect to the HTTPS
// server's port for everything else.
func plainRoutes(m *autocert.Manager, httpsPort string) core.Handler {
	r := router.New()
	r.HandleHTTP("GET", "/.well-known/acme-challenge/:token", m.HTTPHandler(nil))
	r.NotFound = router.RedirectToHTTPS(httpsPort)
	r.MethodNotAllowed = r.NotFound
	return r.Handler()
}

// serve serves both servers until they are shut down, and returns the first error of either
// other than core.ErrServerClosed; an error shuts the other one down.
func (s *servers) serve() error {
	errc := make(chan error, 2)
	for _, srv := range []*core.Server{s.https, s.http} {
		go func() { errc <- srv.ListenAndServe() }()
	}
	var first error
	for range 2 {
		if err := <-errc; !errors.Is(err, core.ErrServerClosed) && first == nil {
			first = err
			s.shutdown(context.Background())
		}
	}
	return first
}

// shutdown shuts both servers down, waiting until ctx is done for requests still running.
func (s *servers) shutdown(ctx context.Context) {
	for _, srv := range []*core.Server{s.http, s.https} {
		if err := srv.Shutdown(ctx); err != nil {
			log.Printf("shutdown: %v", err)
		}
	}
}
