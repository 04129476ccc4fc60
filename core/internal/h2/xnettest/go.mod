module github.com/dwellhttp/dwell/core/internal/h2/xnettest

go 1.26.0

replace github.com/dwellhttp/dwell => ../../../..

require (
	github.com/dwellhttp/dwell v0.0.0-00010101000000-000000000000
	golang.org/x/net v0.62.0
)

require (
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
