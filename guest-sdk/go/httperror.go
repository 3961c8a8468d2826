package azdext

// The error of outbound HTTP that azd shows: the transport itself is in the
// package azdhttp (azdext itself links no net/http, which would add about
// 5 MB to every provider, HTTP or not).

import "strings"

// HTTPError is why a request got no response at all (a response with an
// error status is a response: see azdhttp.ResponseError). The transport of
// package azdhttp returns it, and http.Client wraps it in a *url.Error;
// errors.As finds it. Returned from a provider's method, azd shows it as a
// local error of category dependency with code http_<Code in snake case>.
type HTTPError struct {
	// Code is wasi:http's error code in kebab case: "http-request-denied" (the
	// manifest does not grant the origin), "connection-refused",
	// "connection-timeout", "connection-read-timeout", "dns-error",
	// "tls-certificate-error", "http-response-body-size" (past the manifest's
	// max_response_bytes), "http-response-incomplete", ...; or
	// "http-request-invalid" when the request cannot be expressed in wasi:http.
	Code string
	// Origin is where the request went, as scheme://host:port.
	Origin string
	// Detail is what else is known: the code's payload, the host's words.
	Detail string
}

func (e *HTTPError) Error() string {
	var what string
	switch {
	case e.Code == "http-request-denied":
		what = "the sandbox refused a request to " + e.Origin +
			": provider.toml's [policy.http] allow does not grant this origin"
	case e.Code == "connection-refused":
		what = e.Origin + " refused the connection"
	case strings.HasPrefix(e.Code, "dns-") || strings.HasPrefix(e.Code, "destination-"):
		what = "the host name of " + e.Origin + " did not resolve, or its address is unreachable"
	case e.Timeout():
		what = e.Origin + " did not answer in time"
	case strings.HasPrefix(e.Code, "tls-"):
		what = "TLS with " + e.Origin + " failed"
	case e.Code == "http-response-body-size":
		what = "the response from " + e.Origin + " is larger than provider.toml's [policy.http] max_response_bytes allows"
	case e.Code == "connection-limit-reached":
		what = "too many requests are open at once; " + e.Origin + " was not reached"
	case e.Code == "http-request-invalid":
		what = "the request to " + e.Origin + " cannot be sent"
	default:
		what = "the request to " + e.Origin + " failed"
	}
	if e.Detail != "" {
		return what + " (" + e.Code + ": " + e.Detail + ")"
	}
	return what + " (" + e.Code + ")"
}

// Timeout tells whether the host gave up waiting (as net.Error's Timeout).
func (e *HTTPError) Timeout() bool { return strings.HasSuffix(e.Code, "-timeout") }

// suggestion is what to check, for the error azd shows.
func (e *HTTPError) suggestion() string {
	switch {
	case e.Code == "http-request-denied":
		return "" // the host names the grant to add
	case strings.HasPrefix(e.Code, "dns-") || strings.HasPrefix(e.Code, "destination-"):
		return "Check the URL's host name."
	case e.Timeout():
		return "Check that the service is reachable, or try again (provider.toml's [policy.http] timeout_secs bounds each request)."
	case e.Code == "connection-refused":
		return "Nothing accepted the connection: check the URL's host and port, and that the service is running."
	case strings.HasPrefix(e.Code, "tls-"):
		return "Check the host name, and that the server's certificate is valid."
	case e.Code == "http-response-body-size":
		return "Raise max_response_bytes under [policy.http] in provider.toml if the provider should read answers this large."
	default:
		return ""
	}
}

// withoutQuery is a URL as errors show it: its query may carry a signature (SAS `sig=`).
func withoutQuery(raw string) string {
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		return raw[:i]
	}
	return raw
}
