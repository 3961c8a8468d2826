package azdhttp

// wasi:http's error codes as azdext.HTTPError, and where a request goes (pure
// conversions: the calls that produce them are in transport_wasip1.go).

import (
	"fmt"
	"net/url"
	"strings"

	"azd-wasm-host/azdext"

	httptypes "azd-wasm-host/azdext/internal/wit/imports/wasi_http_types"
	witTypes "azd-wasm-host/azdext/internal/wit/types"
)

// errorCodeNames are wasi:http's error-code cases in the WIT's order (the tag
// is the index), in kebab case.
var errorCodeNames = [...]string{
	"dns-timeout", "dns-error", "destination-not-found", "destination-unavailable",
	"destination-ip-prohibited", "destination-ip-unroutable", "connection-refused",
	"connection-terminated", "connection-timeout", "connection-read-timeout",
	"connection-write-timeout", "connection-limit-reached", "tls-protocol-error",
	"tls-certificate-error", "tls-alert-received", "http-request-denied",
	"http-request-length-required", "http-request-body-size", "http-request-method-invalid",
	"http-request-uri-invalid", "http-request-uri-too-long", "http-request-header-section-size",
	"http-request-header-size", "http-request-trailer-section-size", "http-request-trailer-size",
	"http-response-incomplete", "http-response-header-section-size", "http-response-header-size",
	"http-response-body-size", "http-response-trailer-section-size", "http-response-trailer-size",
	"http-response-transfer-coding", "http-response-content-coding", "http-response-timeout",
	"http-upgrade-failed", "http-protocol-error", "loop-detected", "configuration-error",
	"internal-error",
}

// httpErrorOf is a wasi:http error code for a request to origin.
func httpErrorOf(code httptypes.ErrorCode, origin string) *azdext.HTTPError {
	tag := int(code.Tag())
	if tag >= len(errorCodeNames) {
		return &azdext.HTTPError{Code: "internal-error", Origin: origin, Detail: fmt.Sprintf("unknown wasi:http error code %d", tag)}
	}
	return &azdext.HTTPError{Code: errorCodeNames[tag], Origin: origin, Detail: errorDetail(code)}
}

// errorDetail is what the payload of an error code says, if anything.
func errorDetail(code httptypes.ErrorCode) string {
	switch code.Tag() {
	case httptypes.ErrorCode_DnsError:
		p := code.DnsError()
		var parts []string
		if p.Rcode.IsSome() {
			parts = append(parts, "rcode "+p.Rcode.Some())
		}
		if p.InfoCode.IsSome() {
			parts = append(parts, fmt.Sprintf("info code %d", p.InfoCode.Some()))
		}
		return strings.Join(parts, ", ")
	case httptypes.ErrorCode_TlsAlertReceived:
		p := code.TlsAlertReceived()
		detail := p.AlertMessage.SomeOr("")
		if p.AlertId.IsSome() {
			detail = strings.TrimSpace(fmt.Sprintf("alert %d %s", p.AlertId.Some(), detail))
		}
		return detail
	case httptypes.ErrorCode_HttpResponseBodySize:
		return bytesDetail(code.HttpResponseBodySize())
	case httptypes.ErrorCode_HttpRequestBodySize:
		return bytesDetail(code.HttpRequestBodySize())
	case httptypes.ErrorCode_HttpResponseTransferCoding:
		return code.HttpResponseTransferCoding().SomeOr("")
	case httptypes.ErrorCode_HttpResponseContentCoding:
		return code.HttpResponseContentCoding().SomeOr("")
	case httptypes.ErrorCode_InternalError:
		return code.InternalError().SomeOr("")
	}
	return ""
}

func bytesDetail(size witTypes.Option[uint64]) string {
	if size.IsNone() {
		return ""
	}
	return fmt.Sprintf("%d bytes", size.Some())
}

// origin is scheme://host:port of u (the port written out, as [policy.http] lists origins).
func origin(u *url.URL, host string) string {
	if u == nil {
		return "(no URL)"
	}
	if host == "" {
		host = u.Host
	}
	scheme := strings.ToLower(u.Scheme)
	if strings.LastIndex(host, ":") <= strings.LastIndex(host, "]") { // no port
		switch scheme {
		case "https":
			host += ":443"
		case "http":
			host += ":80"
		}
	}
	return scheme + "://" + strings.ToLower(host)
}
