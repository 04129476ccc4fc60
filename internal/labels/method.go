package labels

// Other is the method label of a method the conventions do not know, so that a label is
// bounded whatever clients send.
const Other = "_OTHER"

// Methods is the number of method labels: the known methods and Other.
const Methods = len(methodNames)

// methodNames holds the method labels, Other last, in the order of MethodIndex.
var methodNames = [...]string{"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE", "QUERY", Other}

// Method returns m as OpenTelemetry's http.request.method names it: one of the methods of RFC
// 9110, PATCH and QUERY (as constants, so that a key made of it holds no request memory), or
// Other.
func Method(m string) string {
	return methodNames[MethodIndex(m)]
}

// MethodIndex returns the index of m's label among the Methods labels (MethodName's inverse),
// for metrics kept in an array by method.
func MethodIndex(m string) int {
	switch m {
	case "GET":
		return 0
	case "HEAD":
		return 1
	case "POST":
		return 2
	case "PUT":
		return 3
	case "DELETE":
		return 4
	case "PATCH":
		return 5
	case "OPTIONS":
		return 6
	case "CONNECT":
		return 7
	case "TRACE":
		return 8
	case "QUERY":
		return 9
	}
	return Methods - 1
}

// MethodName returns the method label of index i, as MethodIndex gives it.
func MethodName(i int) string { return methodNames[i] }
