//go:build !wasip1

package azdhttp

import "net/http"

// Transport is Go's own http.DefaultTransport outside the component (go test
// on your machine, against httptest servers, say).
var Transport http.RoundTripper = http.DefaultTransport
