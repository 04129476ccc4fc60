module github.com/dwellhttp/dwell

go 1.26.0

require (
	github.com/julienschmidt/httprouter v1.3.0
	golang.org/x/sys v0.50.0
)

require github.com/google/uuid v1.6.0
