module github.com/dwellhttp/dwell/examples/autocert

go 1.26.0

require (
	github.com/dwellhttp/dwell v0.0.0-00010101000000-000000000000
	golang.org/x/crypto v0.58.0
)

require (
	github.com/julienschmidt/httprouter v1.3.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace github.com/dwellhttp/dwell => ../..
