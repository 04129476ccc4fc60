package labels

// Other is the method label of a method the conventions do not know, so that a label is
// bounded whatever clients send.
const Other = "_OTHER"

// Method returns m as OpenTelemetry's http.request.method names it: one of the methods of RFC
// 9110, PATCH and QUERY (as constants, so that a key made of it holds no request memory), or
// Other.
func Method(m string) string {
	switch m {
	case "GET":
		return "GET"
	case "HEAD":
		return "HEAD"
	case "POST":
		return "POST"
	case "PUT":
		return "PUT"
	case "DELETE":
		return "DELETE"
	case "PATCH":
		return "PATCH"
	case "OPTIONS":
		return "OPTIONS"
	case "CONNECT":
		return "CONNECT"
	case "TRACE":
		return "TRACE"
	case "QUERY":
		return "QUERY"
	}
	return Other
}
