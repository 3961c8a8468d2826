//go:build wasip1

package azdhttp

// Inside the component: http.DefaultTransport over wasi:http/outgoing-handler.
// The host sends each request only to an origin the manifest's [policy.http]
// grants, does TLS itself, and bounds each request's time and response size.
//
// Every resource is dropped here as soon as it is done with, children before
// their parents (a body's stream before the body, a response's headers and
// body before the response), rather than left to the collector.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"azd-wasm-host/azdext"
	clock "azd-wasm-host/azdext/internal/wit/imports/wasi_clocks_monotonic_clock"
	handler "azd-wasm-host/azdext/internal/wit/imports/wasi_http_outgoing_handler"
	httptypes "azd-wasm-host/azdext/internal/wit/imports/wasi_http_types"
	poll "azd-wasm-host/azdext/internal/wit/imports/wasi_io_poll"
	streams "azd-wasm-host/azdext/internal/wit/imports/wasi_io_streams"
	witRuntime "azd-wasm-host/azdext/internal/wit/runtime"
	witTypes "azd-wasm-host/azdext/internal/wit/types"
)

// Transport is the RoundTripper over wasi:http; init makes it http.DefaultTransport.
var Transport http.RoundTripper = wasiTransport{}

func init() {
	http.DefaultTransport = Transport
}

// wasiTransport is an http.RoundTripper over wasi:http.
type wasiTransport struct{}

// hopHeaders are connection-level headers the host sets itself (and refuses from a guest).
var hopHeaders = map[string]bool{
	"connection": true, "keep-alive": true, "proxy-connection": true, "te": true,
	"transfer-encoding": true, "upgrade": true, "host": true, "http2-settings": true,
	"content-length": true, // from Request.ContentLength below
}

// checkEvery is how often a wait on the host looks at a context that can be
// cancelled but has no deadline (nothing else runs while the host blocks).
const checkEvery = 100 * time.Millisecond

// chunk is the most the transport hands the host, or asks of it, at a time.
const chunk = 64 << 10

func (wasiTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := roundTrip(req)
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return resp, err
}

func roundTrip(req *http.Request) (*http.Response, error) {
	releaseOrphans()
	ctx := req.Context()
	if req.URL == nil {
		return nil, &azdext.HTTPError{Code: "http-request-invalid", Origin: "(no URL)", Detail: "the request has no URL"}
	}
	where := origin(req.URL, req.Host)
	invalid := func(detail string) error {
		return &azdext.HTTPError{Code: "http-request-invalid", Origin: where, Detail: detail}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	scheme := strings.ToLower(req.URL.Scheme)
	if scheme != "http" && scheme != "https" {
		return nil, invalid("the scheme " + strconv.Quote(req.URL.Scheme) + " is not http or https")
	}
	fields, err := requestFields(req)
	if err != nil {
		return nil, invalid(err.Error())
	}
	request := httptypes.MakeOutgoingRequest(fields)
	authority := req.Host
	if authority == "" {
		authority = req.URL.Host
	}
	schemeValue := httptypes.MakeSchemeHttp()
	if scheme == "https" {
		schemeValue = httptypes.MakeSchemeHttps()
	}
	for _, set := range []struct {
		result witTypes.Result[witTypes.Unit, witTypes.Unit]
		what   string
	}{
		{request.SetMethod(method(req.Method)), "the method " + strconv.Quote(req.Method)},
		{request.SetScheme(witTypes.Some(schemeValue)), "the scheme"},
		{request.SetAuthority(witTypes.Some(authority)), "the host " + strconv.Quote(authority)},
		{request.SetPathWithQuery(witTypes.Some(req.URL.RequestURI())), "the path"},
	} {
		if set.result.IsErr() {
			request.Drop()
			return nil, invalid("wasi:http refused " + set.what)
		}
	}
	bodyResult := request.Body()
	if bodyResult.IsErr() {
		request.Drop()
		return nil, invalid("the request has no body to write")
	}
	body := bodyResult.Ok()
	sent := handler.Handle(request, requestOptions(ctx))
	if sent.IsErr() {
		body.Drop()
		return nil, httpErrorOf(sent.Err(), where)
	}
	future := sent.Ok()
	writeErr := writeBody(ctx, req.Body, body, where)
	response, err := await(ctx, future, where)
	if err != nil {
		future.Drop()
		return nil, pastDeadline(ctx, err) // the host's reason (a refused origin, say) explains a failed write too
	}
	if writeErr != nil {
		response.Drop()
		future.Drop()
		return nil, writeErr
	}
	return toResponse(ctx, req, future, response, where)
}

// requestFields are req's headers for wasi:http, names in lower case and in
// order, with content-length from req.ContentLength: a body of known length
// says it, as does a request without a body whose method may carry one
// (services such as Azure Storage refuse a PUT without a length).
func requestFields(req *http.Request) (*httptypes.Fields, error) {
	fields := httptypes.MakeFields()
	names := make([]string, 0, len(req.Header))
	for name := range req.Header {
		names = append(names, name)
	}
	sort.Strings(names)
	add := func(name, value string) error {
		if r := fields.Append(name, []byte(value)); r.IsErr() {
			fields.Drop()
			return errors.New("wasi:http refused the header " + strconv.Quote(name))
		}
		return nil
	}
	for _, name := range names {
		lower := strings.ToLower(name)
		if hopHeaders[lower] {
			continue
		}
		for _, value := range req.Header[name] {
			if err := add(lower, value); err != nil {
				return nil, err
			}
		}
	}
	// A body of unknown length (ContentLength 0 or -1 with a Body) goes out chunked.
	bodiless := req.Body == nil || req.Body == http.NoBody
	length := ""
	switch {
	case !bodiless && req.ContentLength > 0:
		length = strconv.FormatInt(req.ContentLength, 10)
	case bodiless && req.Method != "" && req.Method != http.MethodGet && req.Method != http.MethodHead:
		length = "0"
	}
	if length != "" {
		if err := add("content-length", length); err != nil {
			return nil, err
		}
	}
	return fields, nil
}

func method(name string) httptypes.Method {
	switch name {
	case "", http.MethodGet:
		return httptypes.MakeMethodGet()
	case http.MethodHead:
		return httptypes.MakeMethodHead()
	case http.MethodPost:
		return httptypes.MakeMethodPost()
	case http.MethodPut:
		return httptypes.MakeMethodPut()
	case http.MethodDelete:
		return httptypes.MakeMethodDelete()
	case http.MethodPatch:
		return httptypes.MakeMethodPatch()
	case http.MethodOptions:
		return httptypes.MakeMethodOptions()
	case http.MethodConnect:
		return httptypes.MakeMethodConnect()
	case http.MethodTrace:
		return httptypes.MakeMethodTrace()
	default:
		return httptypes.MakeMethodOther(name)
	}
}

// requestOptions asks the host to give up when ctx's deadline passes (it keeps
// its own bound, [policy.http] timeout_secs, whichever is shorter).
func requestOptions(ctx context.Context) witTypes.Option[*httptypes.RequestOptions] {
	deadline, ok := ctx.Deadline()
	if !ok {
		return witTypes.None[*httptypes.RequestOptions]()
	}
	left := time.Until(deadline)
	if left < time.Millisecond {
		left = time.Millisecond
	}
	ns := witTypes.Some(uint64(left.Nanoseconds()))
	options := httptypes.MakeRequestOptions()
	// The host may refuse a setting; its own bounds hold then.
	_ = options.SetConnectTimeout(ns)
	_ = options.SetFirstByteTimeout(ns)
	return witTypes.Some(options)
}

// writeBody streams from (which may be nil) into the request's body, then finishes it.
func writeBody(ctx context.Context, from io.Reader, body *httptypes.OutgoingBody, where string) error {
	if from != nil && from != http.NoBody {
		opened := body.Write()
		if opened.IsErr() {
			body.Drop()
			return &azdext.HTTPError{Code: "http-request-invalid", Origin: where, Detail: "the request body cannot be written"}
		}
		stream := opened.Ok()
		err := copyTo(ctx, stream, from, where)
		stream.Drop()
		if err != nil {
			body.Drop()
			return err
		}
	}
	if r := httptypes.OutgoingBodyFinish(body, witTypes.None[*httptypes.Fields]()); r.IsErr() {
		return httpErrorOf(r.Err(), where)
	}
	return nil
}

// copyTo writes everything from reads into stream, as fast as the host takes it, and flushes.
func copyTo(ctx context.Context, stream *streams.OutputStream, from io.Reader, where string) error {
	buf := make([]byte, chunk)
	for {
		n, readErr := from.Read(buf)
		for data := buf[:n]; len(data) > 0; {
			room := stream.CheckWrite()
			if room.IsErr() {
				return streamError(room.Err(), where, "connection-terminated")
			}
			if room.Ok() == 0 {
				if err := wait(ctx, stream.Subscribe()); err != nil {
					return err
				}
				continue
			}
			k := min(uint64(len(data)), room.Ok())
			if r := stream.Write(data[:k]); r.IsErr() {
				return streamError(r.Err(), where, "connection-terminated")
			}
			data = data[k:]
		}
		if readErr == io.EOF {
			break
		}
		if readErr != nil {
			return &azdext.HTTPError{Code: "http-request-invalid", Origin: where, Detail: "reading the request body: " + readErr.Error()}
		}
	}
	// Everything is written. The host may close the stream once it has sent a body of the
	// length the request said, so a closed stream here is done, not failed (finishing the
	// body says whether the length was right).
	if r := stream.Flush(); r.IsErr() {
		return flushError(r.Err(), where)
	}
	for { // check-write answers 0 until the flush is done
		room := stream.CheckWrite()
		if room.IsErr() {
			return flushError(room.Err(), where)
		}
		if room.Ok() > 0 {
			return nil
		}
		if err := wait(ctx, stream.Subscribe()); err != nil {
			return err
		}
	}
}

// flushError is streamError, except for a stream the host closed (nothing was left to send).
func flushError(e streams.StreamError, where string) error {
	if e.Tag() == streams.StreamError_Closed {
		return nil
	}
	return streamError(e, where, "connection-terminated")
}

// streamError is a failed stream operation as an HTTPError: the host's
// wasi:http code when it has one, else fallback with the host's words.
func streamError(e streams.StreamError, where, fallback string) error {
	if e.Tag() == streams.StreamError_Closed {
		return &azdext.HTTPError{Code: fallback, Origin: where, Detail: "the stream was closed"}
	}
	failure := e.LastOperationFailed()
	defer failure.Drop()
	if code := httptypes.HttpErrorCode(failure); code.IsSome() {
		return httpErrorOf(code.Some(), where)
	}
	return &azdext.HTTPError{Code: fallback, Origin: where, Detail: failure.ToDebugString()}
}

// pastDeadline is err, also matching ctx's error when it is the host's timeout
// for ctx's deadline (requestOptions passed it on), as errors.Is callers expect.
func pastDeadline(ctx context.Context, err error) error {
	var timeout *azdext.HTTPError
	deadline, ok := ctx.Deadline()
	if ok && errors.As(err, &timeout) && timeout.Timeout() && !time.Now().Before(deadline) {
		return fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return err
}

// await is the response the future resolves to.
func await(ctx context.Context, future *httptypes.FutureIncomingResponse, where string) (*httptypes.IncomingResponse, error) {
	for {
		got := future.Get()
		if got.IsNone() {
			if err := wait(ctx, future.Subscribe()); err != nil {
				return nil, err
			}
			continue
		}
		outer := got.Some()
		if outer.IsErr() {
			return nil, &azdext.HTTPError{Code: "internal-error", Origin: where, Detail: "the response was taken twice"}
		}
		inner := outer.Ok()
		if inner.IsErr() {
			return nil, httpErrorOf(inner.Err(), where)
		}
		return inner.Ok(), nil
	}
}

// wait returns when p is ready, or with ctx's error once ctx is done. The
// host blocks the whole component meanwhile, so a context that can end is
// looked at between slices of the wait (its deadline computed here: its own
// timer cannot fire while the host blocks).
func wait(ctx context.Context, p *poll.Pollable) error {
	defer p.Drop()
	if ctx.Done() == nil {
		p.Block()
		return nil
	}
	deadline, hasDeadline := ctx.Deadline()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		slice := checkEvery
		if hasDeadline {
			left := time.Until(deadline)
			if left <= 0 {
				return context.DeadlineExceeded
			}
			slice = min(slice, left)
		}
		timer := clock.SubscribeDuration(uint64(slice.Nanoseconds()))
		ready := poll.Poll([]*poll.Pollable{p, timer})
		done := len(ready) > 0 && ready[0] == 0
		timer.Drop()
		witRuntime.Unpin()
		if done {
			return nil
		}
		runtime.Gosched() // whatever would cancel ctx gets to run
	}
}

// toResponse reads the response's head; its body streams as it is read.
func toResponse(ctx context.Context, req *http.Request, future *httptypes.FutureIncomingResponse,
	response *httptypes.IncomingResponse, where string) (*http.Response, error) {
	status := int(response.Status())
	fields := response.Headers()
	header := http.Header{}
	for _, entry := range fields.Entries() {
		header.Add(entry.F0, string(entry.F1))
	}
	fields.Drop()
	witRuntime.Unpin()
	held := &handles{future: future, response: response}
	consumed := response.Consume()
	if consumed.IsErr() {
		held.release()
		return nil, &azdext.HTTPError{Code: "internal-error", Origin: where, Detail: "the response body was taken twice"}
	}
	held.body = consumed.Ok()
	opened := held.body.Stream()
	if opened.IsErr() {
		held.release()
		return nil, &azdext.HTTPError{Code: "internal-error", Origin: where, Detail: "the response body has no stream"}
	}
	held.stream = opened.Ok()
	body := &responseBody{ctx: ctx, held: held, where: where}
	// A body nobody closes is released by the next request (see orphans).
	runtime.AddCleanup(body, adopt, held)
	length := int64(-1)
	if v, err := strconv.ParseInt(header.Get("Content-Length"), 10, 64); err == nil && v >= 0 {
		length = v
	}
	return &http.Response{
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          body,
		ContentLength: length,
		Request:       req,
	}, nil
}

// handles are the host's resources behind one response, released children first.
type handles struct {
	future   *httptypes.FutureIncomingResponse
	response *httptypes.IncomingResponse
	body     *httptypes.IncomingBody
	stream   *streams.InputStream
	released bool
}

func (h *handles) release() {
	if h.released {
		return
	}
	h.released = true
	if h.stream != nil {
		h.stream.Drop()
	}
	if h.body != nil {
		httptypes.IncomingBodyFinish(h.body).Drop() // the trailers: not read
	}
	h.response.Drop()
	h.future.Drop()
}

// orphans are the handles of bodies the collector found unclosed. The collector's
// goroutine only queues them (calling the host from it could come at any moment);
// the next request releases them, in order, and they stay reachable until then, so
// the generated types' own cleanups never drop a parent before its children.
var orphans struct {
	sync.Mutex
	list []*handles
}

func adopt(h *handles) {
	orphans.Lock()
	orphans.list = append(orphans.list, h)
	orphans.Unlock()
}

func releaseOrphans() {
	orphans.Lock()
	list := orphans.list
	orphans.list = nil
	orphans.Unlock()
	for _, h := range list {
		h.release()
	}
}

// responseBody streams a response's body from the host. Its handles are released
// at the end of the body, on an error, or on Close, whichever comes first.
type responseBody struct {
	ctx    context.Context
	held   *handles
	where  string
	err    error // what every further Read returns (io.EOF at the end)
	closed bool
}

func (b *responseBody) Read(p []byte) (int, error) {
	if b.closed {
		return 0, errors.New("azdhttp: read on a closed response body")
	}
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		got := b.held.stream.Read(uint64(min(len(p), chunk)))
		if got.IsErr() {
			if got.Err().Tag() == streams.StreamError_Closed {
				b.err = io.EOF
			} else {
				b.err = pastDeadline(b.ctx, streamError(got.Err(), b.where, "http-response-incomplete"))
			}
			b.held.release()
			return 0, b.err
		}
		if n := copy(p, got.Ok()); n > 0 {
			witRuntime.Unpin()
			return n, nil
		}
		if err := wait(b.ctx, b.held.stream.Subscribe()); err != nil {
			b.err = err
			b.held.release()
			return 0, err
		}
	}
}

func (b *responseBody) Close() error {
	b.closed = true
	b.held.release()
	return nil
}
