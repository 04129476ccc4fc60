// Command nethttpbin is net/http doing what examples/httpbin does with big bodies, for the
// side-by-side measurement in bench/bodies.sh: POST /anything hashes the body as it streams
// (SHA-256) and answers its length and hash; GET /bytes/{n} sends n bytes with a
// Content-Length, byte i being 'a'+i%26.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
)

// pattern holds whole runs of the alphabet, so that pieces cut at multiples of 26 continue it.
var pattern = func() []byte {
	b := make([]byte, 26*10080) // 262080 bytes, as examples/httpbin writes
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}()

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	mux := http.NewServeMux()
	mux.HandleFunc("/anything", func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.CopyBuffer(h, r.Body, make([]byte, 128<<10))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"body_length":%d,"body_sha256":"%s"}`+"\n", n, hex.EncodeToString(h.Sum(nil)))
	})
	mux.HandleFunc("GET /bytes/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.ParseInt(r.PathValue("n"), 10, 64)
		if err != nil || n < 0 || n > 100<<20 {
			http.Error(w, "bad n", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		for n > 0 {
			k := min(n, int64(len(pattern)))
			if _, err := w.Write(pattern[:k]); err != nil {
				return
			}
			n -= k
		}
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
