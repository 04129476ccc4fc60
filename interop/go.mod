module github.com/dwellhttp/dwell/interop

go 1.26.0

replace github.com/dwellhttp/dwell => ../

require (
	github.com/coder/websocket v1.8.15
	github.com/dwellhttp/dwell v0.0.0-00010101000000-000000000000
	github.com/gorilla/websocket v1.5.3
	golang.org/x/net v0.62.0
)

require (
	github.com/julienschmidt/httprouter v1.3.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
