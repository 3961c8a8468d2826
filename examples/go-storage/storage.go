package main

// One Azure Storage account through its REST API: list, create and delete containers (Blob
// service), queues (Queue service) and tables (Table service), each request signed with the
// account key (Shared Key, HMAC-SHA256) or carrying an access token from azd. Requests go out
// with net/http, which the azdhttp package sends through the host, only to the origins
// provider.toml grants.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"azd-wasm-host/azdext"
	"azd-wasm-host/azdext/azdhttp"
)

const (
	storageVersion = "2021-12-02"
	keyVariable    = "AZURE_STORAGE_KEY"
	storageScope   = "https://storage.azure.com/.default"
	serviceName    = "Azure Storage"
	// maxPages bounds a listing: more pages are refused rather than looped over forever.
	maxPages = 100
	// maxListing bounds the bytes of one listing page read.
	maxListing = 4 << 20
)

// signer adds the credentials to a request (table: the Table service's Shared Key form).
type signer func(req *http.Request, table bool) error

// sharedKeySigner signs with the account key from AZURE_STORAGE_KEY.
func sharedKeySigner(account string) (signer, error) {
	key := strings.TrimSpace(os.Getenv(keyVariable))
	if key == "" {
		return nil, &azdext.LocalError{
			Message:  "`auth: shared-key` needs the account key in " + keyVariable + ", which is not set",
			Code:     "no_storage_key",
			Category: azdext.LocalErrorCategoryAuth,
			Suggestion: "export " + keyVariable + "=<key> before running azd (and keep " + keyVariable +
				" in the manifest's [policy] env), or use `auth: token`",
		}
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return nil, &azdext.LocalError{Message: keyVariable + " is not a base64 account key", Code: "invalid_storage_key", Category: azdext.LocalErrorCategoryAuth}
	}
	return func(req *http.Request, table bool) error {
		text := stringToSign(req, account)
		if table {
			text = tableStringToSign(req, account)
		}
		mac := hmac.New(sha256.New, raw)
		mac.Write([]byte(text))
		req.Header.Set("Authorization", "SharedKey "+account+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
		return nil
	}, nil
}

// tokenSigner carries a bearer token from azd's sign-in (Azure accounts).
func tokenSigner(req *http.Request, _ bool) error {
	token, err := azdext.GetAccessToken(storageScope)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token.Token)
	return nil
}

func canonicalResource(u *url.URL, account string) string {
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return "/" + account + path
}

// contentLength is the Content-Length as signed: what the transport sends, "" for none or 0.
func contentLength(req *http.Request) string {
	if req.ContentLength > 0 {
		return strconv.FormatInt(req.ContentLength, 10)
	}
	return ""
}

// stringToSign is the Blob and Queue services' Shared Key string.
func stringToSign(req *http.Request, account string) string {
	var b strings.Builder
	b.WriteString(req.Method + "\n")
	for _, name := range []string{"Content-Encoding", "Content-Language", "Content-Length", "Content-MD5", "Content-Type",
		"Date", "If-Modified-Since", "If-Match", "If-None-Match", "If-Unmodified-Since", "Range"} {
		value := req.Header.Get(name)
		if name == "Content-Length" {
			value = contentLength(req)
		}
		b.WriteString(value + "\n")
	}
	var ms []string
	for name := range req.Header {
		if lower := strings.ToLower(name); strings.HasPrefix(lower, "x-ms-") {
			ms = append(ms, lower)
		}
	}
	sort.Strings(ms)
	for _, name := range ms {
		b.WriteString(name + ":" + strings.TrimSpace(req.Header.Get(name)) + "\n")
	}
	b.WriteString(canonicalResource(req.URL, account))
	query := map[string][]string{}
	for k, v := range req.URL.Query() {
		query[strings.ToLower(k)] = append(query[strings.ToLower(k)], v...)
	}
	for _, name := range sortedKeys(query) {
		b.WriteString("\n" + name + ":" + strings.Join(query[name], ","))
	}
	return b.String()
}

// tableStringToSign is the Table service's Shared Key string.
func tableStringToSign(req *http.Request, account string) string {
	resource := canonicalResource(req.URL, account)
	if comp := req.URL.Query().Get("comp"); comp != "" {
		resource += "?comp=" + comp
	}
	return strings.Join([]string{req.Method, req.Header.Get("Content-MD5"), req.Header.Get("Content-Type"),
		req.Header.Get("X-Ms-Date"), resource}, "\n")
}

// account is one storage account and how to reach it.
type account struct {
	name      string
	endpoints map[kind]string
	sign      signer
	client    *http.Client
}

// url is where a resource lives (its id in azd's state and preview).
func (a *account) url(k kind, name string) string {
	if k == table {
		return a.endpoints[table] + "/Tables('" + name + "')"
	}
	return a.endpoints[k] + "/" + name
}

// send makes, signs and sends one request; any status is an answer.
func (a *account) send(ctx context.Context, method, target string, table bool, body []byte) (*http.Response, error) {
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, reader)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Ms-Date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("X-Ms-Version", storageVersion)
	if table {
		req.Header.Set("Accept", "application/json;odata=nometadata")
		req.Header.Set("DataServiceVersion", "3.0;NetFx")
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := a.sign(req, table); err != nil {
		return nil, err
	}
	return a.client.Do(req)
}

// refused is a failed answer as azd's service error; a refusal of the credentials says what to check.
func refused(resp *http.Response) error {
	e := azdhttp.ResponseError(resp, serviceName)
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		e.Suggestion = "The storage account refused the credentials: check " + keyVariable +
			" (auth: shared-key), or that you hold a data role on the account (auth: token)."
	}
	return e
}

// listing is a page of the Blob or Queue service's list (XML).
type listing struct {
	Containers []string `xml:"Containers>Container>Name"`
	Queues     []string `xml:"Queues>Queue>Name"`
	NextMarker string   `xml:"NextMarker"`
}

// list is the names of every resource of kind k in the account.
func (a *account) list(ctx context.Context, k kind) ([]string, error) {
	var found []string
	marker := ""
	for page := 0; page < maxPages; page++ {
		var target string
		if k == table {
			target = a.endpoints[table] + "/Tables"
			if marker != "" {
				target += "?NextTableName=" + url.QueryEscape(marker)
			}
		} else {
			target = a.endpoints[k] + "/?comp=list"
			if marker != "" {
				target += "&marker=" + url.QueryEscape(marker)
			}
		}
		resp, err := a.send(ctx, http.MethodGet, target, k == table, nil)
		if err != nil {
			return nil, fmt.Errorf("listing the %ss of storage account %s: %w", k, a.name, err)
		}
		if resp.StatusCode >= 300 {
			return nil, refused(resp)
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxListing))
		_ = resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("reading the %ss of storage account %s: %w", k, a.name, err)
		}
		if k == table {
			var doc struct {
				Value []struct {
					TableName string `json:"TableName"`
				} `json:"value"`
			}
			if err := json.Unmarshal(data, &doc); err != nil {
				return nil, unreadable(k, err)
			}
			for _, t := range doc.Value {
				found = append(found, t.TableName)
			}
			marker = resp.Header.Get("X-Ms-Continuation-Nexttablename")
		} else {
			var doc listing
			if err := xml.Unmarshal(data, &doc); err != nil {
				return nil, unreadable(k, err)
			}
			found = append(found, doc.Containers...)
			found = append(found, doc.Queues...)
			marker = doc.NextMarker
		}
		if marker == "" {
			return found, nil
		}
	}
	return nil, &azdext.LocalError{Message: fmt.Sprintf("%s listed more than %d pages of %ss", serviceName, maxPages, k),
		Code: "too_many_pages", Category: azdext.LocalErrorCategoryDependency}
}

func unreadable(k kind, err error) error {
	return &azdext.LocalError{Message: fmt.Sprintf("%s's list of %ss is unreadable: %v", serviceName, k, err),
		Code: "unreadable_listing", Category: azdext.LocalErrorCategoryDependency}
}

// create makes a resource; false when it existed already (someone made it meanwhile).
func (a *account) create(ctx context.Context, k kind, name string) (bool, error) {
	var resp *http.Response
	var err error
	switch k {
	case table:
		body, _ := json.Marshal(map[string]string{"TableName": name})
		resp, err = a.send(ctx, http.MethodPost, a.endpoints[table]+"/Tables", true, body)
	case container:
		resp, err = a.send(ctx, http.MethodPut, a.endpoints[k]+"/"+name+"?restype=container", false, nil)
	default:
		resp, err = a.send(ctx, http.MethodPut, a.endpoints[k]+"/"+name, false, nil)
	}
	if err != nil {
		return false, fmt.Errorf("creating %s %s: %w", k, name, err)
	}
	if resp.StatusCode == http.StatusConflict {
		_ = resp.Body.Close()
		return false, nil
	}
	if resp.StatusCode >= 300 {
		return false, refused(resp)
	}
	_ = resp.Body.Close()
	return true, nil
}

// remove deletes a resource; one already gone is no error.
func (a *account) remove(ctx context.Context, k kind, name string) error {
	target := a.endpoints[k] + "/" + name
	switch k {
	case table:
		target = a.url(table, name)
	case container:
		target += "?restype=container"
	}
	resp, err := a.send(ctx, http.MethodDelete, target, k == table, nil)
	if err != nil {
		return fmt.Errorf("deleting %s %s: %w", k, name, err)
	}
	if resp.StatusCode == http.StatusNotFound {
		_ = resp.Body.Close()
		return nil
	}
	if resp.StatusCode >= 300 {
		return refused(resp)
	}
	_ = resp.Body.Close()
	return nil
}
