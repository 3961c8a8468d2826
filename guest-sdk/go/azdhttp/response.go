package azdhttp

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"strings"

	"azd-wasm-host/azdext"
)

// maxErrorBody bounds what ResponseError reads of a refusal.
const maxErrorBody = 64 << 10

// ResponseError is a service's answer with an error status as azd's
// ServiceError: the status, the service's own error code and its message.
// The code is the x-ms-error-code header, else `error.code` or `code` of a
// JSON body (`odata.error` of the Table service's), else <Code> of Azure
// Storage's XML <Error>; without one it is "http_<status>". It reads the body
// (up to 64 KiB) and closes it. serviceName names the service ("Azure
// Storage"); set Suggestion on the result to say what to check.
func ResponseError(resp *http.Response, serviceName string) *azdext.ServiceError {
	var body []byte
	if resp.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		_ = resp.Body.Close()
	}
	code, message := errorOfBody(body)
	if header := strings.TrimSpace(resp.Header.Get("x-ms-error-code")); header != "" {
		code = header
	}
	text := fmt.Sprintf("%s: %d", serviceName, resp.StatusCode)
	switch {
	case code != "":
		text += " " + code
	case http.StatusText(resp.StatusCode) != "":
		text += " " + http.StatusText(resp.StatusCode)
	}
	if message != "" {
		text += ": " + message
	}
	errorCode := code
	if errorCode == "" {
		errorCode = fmt.Sprintf("http_%d", resp.StatusCode)
	}
	return &azdext.ServiceError{Message: text, ErrorCode: errorCode, StatusCode: resp.StatusCode, ServiceName: serviceName}
}

// errorOfBody is the code and message of an Azure error body (JSON or XML),
// or no code and the body's first line when it is neither.
func errorOfBody(body []byte) (code, message string) {
	body = bytes.TrimPrefix(bytes.TrimSpace(body), []byte("\xef\xbb\xbf"))
	if len(body) == 0 {
		return "", ""
	}
	if body[0] == '{' {
		var doc map[string]json.RawMessage
		if json.Unmarshal(body, &doc) == nil {
			for _, key := range []string{"error", "odata.error"} {
				var inner map[string]json.RawMessage
				if raw, ok := doc[key]; ok && json.Unmarshal(raw, &inner) == nil {
					return jsonText(inner["code"]), firstLine(jsonText(inner["message"]))
				}
			}
			return jsonText(doc["code"]), firstLine(jsonText(doc["message"]))
		}
	}
	if body[0] == '<' {
		var doc struct {
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		}
		if xml.Unmarshal(body, &doc) == nil && (doc.Code != "" || doc.Message != "") {
			return strings.TrimSpace(doc.Code), firstLine(doc.Message)
		}
	}
	return "", firstLine(string(body))
}

// jsonText is a JSON string's text, or the `value` of an object holding one
// (OData's {"lang": …, "value": …} messages); "" for anything else.
func jsonText(raw json.RawMessage) string {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return strings.TrimSpace(text)
	}
	var localized struct {
		Value string `json:"value"`
	}
	if json.Unmarshal(raw, &localized) == nil {
		return strings.TrimSpace(localized.Value)
	}
	return ""
}

// firstLine is text's first non-empty line, at most 300 bytes (Azure Storage
// adds RequestId and Time lines to its messages).
func firstLine(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > 300 {
				line = strings.ToValidUTF8(line[:300], "") + "…"
			}
			return line
		}
	}
	return ""
}
