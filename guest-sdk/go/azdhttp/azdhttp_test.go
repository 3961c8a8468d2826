package azdhttp

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	httptypes "azd-wasm-host/azdext/internal/wit/imports/wasi_http_types"
	witTypes "azd-wasm-host/azdext/internal/wit/types"
)

// reply is a response as a service would send it.
func reply(status int, header map[string]string, body string) *http.Response {
	h := http.Header{}
	for k, v := range header {
		h.Set(k, v)
	}
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body))}
}

func TestResponseErrorReadsAzureStorageXML(t *testing.T) {
	body := "\ufeff<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>ContainerNotFound</Code>" +
		"<Message>The specified container does not exist.\nRequestId:42\nTime:2026-01-01T00:00:00Z</Message></Error>"
	e := ResponseError(reply(404, nil, body), "Azure Storage")
	if e.ErrorCode != "ContainerNotFound" || e.StatusCode != 404 || e.ServiceName != "Azure Storage" {
		t.Fatalf("%+v", e)
	}
	if e.Message != "Azure Storage: 404 ContainerNotFound: The specified container does not exist." {
		t.Fatalf("%q", e.Message)
	}
}

func TestResponseErrorReadsAzureJSONShapes(t *testing.T) {
	for _, c := range []struct{ body, code, message string }{
		{`{"error":{"code":"AuthorizationFailed","message":"The client has no authorization."}}`, "AuthorizationFailed", "The client has no authorization."},
		{`{"code":"BadRequest","message":"Bad input"}`, "BadRequest", "Bad input"},
		{`{"odata.error":{"code":"TableAlreadyExists","message":{"lang":"en-US","value":"The table exists.\nRequestId:1"}}}`, "TableAlreadyExists", "The table exists."},
		{`{"error":{"code":42,"message":["not text"]}}`, "", ""},
	} {
		e := ResponseError(reply(409, nil, c.body), "Svc")
		wantCode := c.code
		if wantCode == "" {
			wantCode = "http_409"
		}
		if e.ErrorCode != wantCode || !strings.HasSuffix(e.Message, c.message) {
			t.Errorf("%s: %+v", c.body, e)
		}
	}
}

func TestResponseErrorPrefersTheHeaderAndFallsBackToTheStatus(t *testing.T) {
	e := ResponseError(reply(403, map[string]string{"x-ms-error-code": "AuthorizationFailure"}, ""), "Azure Storage")
	if e.ErrorCode != "AuthorizationFailure" || e.Message != "Azure Storage: 403 AuthorizationFailure" {
		t.Fatalf("%+v", e)
	}
	e = ResponseError(reply(502, nil, "upstream broke\nmore"), "Gateway")
	if e.ErrorCode != "http_502" || e.Message != "Gateway: 502 Bad Gateway: upstream broke" {
		t.Fatalf("%+v", e)
	}
	e = ResponseError(&http.Response{StatusCode: 599, Header: http.Header{}}, "X")
	if e.ErrorCode != "http_599" || e.Message != "X: 599" {
		t.Fatalf("%+v", e)
	}
	// A body too long for an error is cut, whole characters only.
	e = ResponseError(reply(500, nil, strings.Repeat("é", 400)), "X")
	if len(e.Message) > 400 || !strings.HasSuffix(e.Message, "…") {
		t.Fatalf("%d %q", len(e.Message), e.Message)
	}
}

func TestOriginsAreWrittenAsThePolicyListsThem(t *testing.T) {
	for raw, want := range map[string]string{
		"https://Acct.blob.core.windows.net/c?sig=x": "https://acct.blob.core.windows.net:443",
		"http://127.0.0.1:10000/devstoreaccount1":    "http://127.0.0.1:10000",
		"http://[::1]/x":      "http://[::1]:80",
		"http://[::1]:8080/x": "http://[::1]:8080",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := origin(u, ""); got != want {
			t.Errorf("%s: %s, want %s", raw, got, want)
		}
	}
}

func TestWasiErrorCodesBecomeHTTPErrorsNamingTheCause(t *testing.T) {
	const where = "http://127.0.0.1:10000"
	denied := httpErrorOf(httptypes.MakeErrorCodeHttpRequestDenied(), where)
	if denied.Code != "http-request-denied" || !strings.Contains(denied.Error(), "[policy.http] allow does not grant this origin") ||
		!strings.Contains(denied.Error(), where) {
		t.Fatalf("%v", denied)
	}
	size := httpErrorOf(httptypes.MakeErrorCodeHttpResponseBodySize(witTypes.Some[uint64](5000)), where)
	if size.Error() != "the response from "+where+" is larger than provider.toml's [policy.http] max_response_bytes allows (http-response-body-size: 5000 bytes)" {
		t.Fatalf("%q", size.Error())
	}
	timeout := httpErrorOf(httptypes.MakeErrorCodeConnectionReadTimeout(), where)
	if !timeout.Timeout() || timeout.Code != "connection-read-timeout" {
		t.Fatalf("%+v", timeout)
	}
	dns := httpErrorOf(httptypes.MakeErrorCodeDnsError(httptypes.DnsErrorPayload{
		Rcode: witTypes.Some("NXDOMAIN"), InfoCode: witTypes.None[uint16](),
	}), where)
	if dns.Code != "dns-error" || dns.Detail != "rcode NXDOMAIN" {
		t.Fatalf("%+v", dns)
	}
	internal := httpErrorOf(httptypes.MakeErrorCodeInternalError(witTypes.Some("body size exceeds limit")), where)
	if internal.Code != "internal-error" || !strings.Contains(internal.Error(), "body size exceeds limit") {
		t.Fatalf("%v", internal)
	}
	// Every case of the WIT has its name, the last one included.
	if errorCodeNames[httptypes.ErrorCode_InternalError] != "internal-error" ||
		errorCodeNames[httptypes.ErrorCode_HttpRequestDenied] != "http-request-denied" ||
		errorCodeNames[httptypes.ErrorCode_TlsCertificateError] != "tls-certificate-error" {
		t.Fatal("errorCodeNames is out of step with the WIT")
	}
}
