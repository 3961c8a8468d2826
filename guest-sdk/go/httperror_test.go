package azdext

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func TestTransportErrorsBecomeDependencyErrorsWithoutTheQuery(t *testing.T) {
	cause := &HTTPError{Code: "connection-refused", Origin: "http://127.0.0.1:10001"}
	err := fmt.Errorf("listing queues: %w", &url.Error{Op: "Get", URL: "http://127.0.0.1:10001/acct?comp=list&sig=SECRET", Err: cause})
	w := toWitError(err)
	local := w.Detail.Some().Local()
	if local.Code != "http_connection_refused" || local.Category != "dependency" {
		t.Fatalf("%+v", local)
	}
	if strings.Contains(w.Message, "SECRET") || !strings.Contains(w.Message, "http://127.0.0.1:10001/acct?…") ||
		!strings.Contains(w.Message, "refused the connection") {
		t.Fatalf("%q", w.Message)
	}
	if !strings.Contains(w.Suggestion, "check the URL's host and port") {
		t.Fatalf("%q", w.Suggestion)
	}
	// A provider's own error keeps its detail, and loses the query all the same.
	own := &LocalError{Message: "cannot list", Code: "list_failed", Category: LocalErrorCategoryDependency}
	w = toWitError(fmt.Errorf("%w: %w", own, &url.Error{Op: "Get", URL: "https://x/?sig=SECRET", Err: errors.New("boom")}))
	if strings.Contains(w.Message, "SECRET") || w.Detail.Some().Local().Code != "list_failed" {
		t.Fatalf("%+v", w)
	}
}

func TestAFailedDialSaysToImportTheTransport(t *testing.T) {
	err := &url.Error{Op: "Get", URL: "http://127.0.0.1:10000/x", Err: errors.New("dial tcp 127.0.0.1:10000: connect: Connection refused")}
	w := toWitError(fmt.Errorf("listing: %w", err))
	if !strings.Contains(w.Suggestion, "azd-wasm-host/azdext/azdhttp") {
		t.Fatalf("%+v", w)
	}
	if w := toWitError(errors.New("something else")); w.Suggestion != "" {
		t.Fatalf("%+v", w)
	}
}

func TestHTTPErrorsNameTheirCause(t *testing.T) {
	const o = "https://acct.blob.core.windows.net:443"
	for code, want := range map[string]string{
		"http-request-denied":     "the sandbox refused a request to " + o + ": provider.toml's [policy.http] allow does not grant this origin (http-request-denied)",
		"connection-refused":      o + " refused the connection (connection-refused)",
		"connection-read-timeout": o + " did not answer in time (connection-read-timeout)",
		"dns-timeout":             "the host name of " + o + " did not resolve, or its address is unreachable (dns-timeout)",
		"tls-certificate-error":   "TLS with " + o + " failed (tls-certificate-error)",
		"loop-detected":           "the request to " + o + " failed (loop-detected)",
	} {
		e := &HTTPError{Code: code, Origin: o}
		if e.Error() != want {
			t.Errorf("%s: %q", code, e.Error())
		}
		if e.Timeout() != strings.HasSuffix(code, "-timeout") {
			t.Errorf("%s: Timeout() is %v", code, e.Timeout())
		}
	}
	e := &HTTPError{Code: "internal-error", Origin: o, Detail: "body size exceeds limit"}
	if e.Error() != "the request to "+o+" failed (internal-error: body size exceeds limit)" {
		t.Errorf("%q", e.Error())
	}
}
