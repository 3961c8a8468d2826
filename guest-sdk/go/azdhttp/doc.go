// Package azdhttp gives a Go provider outbound HTTP: importing it makes
// http.DefaultTransport (so http.DefaultClient, http.Get, and any client
// without a transport of its own) go out through the host's
// wasi:http/outgoing-handler inside the component.
//
//	import _ "azd-wasm-host/azdext/azdhttp" // in the package main of the provider
//
// The host sends a request only to an origin the manifest grants
// ([policy.http] allow in provider.toml, e.g. "https://myaccount.blob.core.windows.net"),
// does TLS itself, and bounds each request's time (timeout_secs) and the bytes
// of its response (max_response_bytes). A request that gets no response fails
// with an *azdext.HTTPError (wrapped by http.Client in a *url.Error) whose Code
// is wasi:http's error code: "http-request-denied" for an origin the manifest
// does not grant, "connection-refused", "connection-read-timeout",
// "http-response-body-size", ...; returned from a provider's method, azd shows
// it as a dependency error naming the cause.
//
// Requests carry their context: a deadline is passed on to the host, and a
// context that ends while the host waits ends the request
// (context.DeadlineExceeded, context.Canceled). A request body streams out as
// it is read, with Content-Length when the request knows its length and
// chunked otherwise; a response body streams in as it is read. There is no
// proxy, no HTTP/2 choice and no connection pool to configure: the host owns
// the connections.
//
// A service's own refusal (a status of 400 or more) is a response:
// ResponseError turns it into azd's ServiceError with the service's error code
// and message (Azure's JSON and Azure Storage's XML error bodies).
//
// The Azure SDK for Go builds its own transport; give its clients this one:
//
//	opts := &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: http.DefaultClient}}
//
// and a token credential that asks azd (azdext.GetAccessToken), since the
// sandbox runs no az CLI and reads no credential files.
//
// Outside the component (go test on your machine) this package changes
// nothing: Transport is Go's own, so tests can use httptest servers.
package azdhttp
