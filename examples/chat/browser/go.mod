module github.com/dwellhttp/dwell/examples/chat/browser

go 1.26.0

require (
	github.com/chromedp/chromedp v0.23.0
	github.com/dwellhttp/dwell v0.0.0
)

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/julienschmidt/httprouter v1.3.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/dwellhttp/dwell => ../../..
