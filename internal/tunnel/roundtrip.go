package tunnel

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// RoundTrip sends req down the tunnel named by the first segment of its
// path and returns the dev bot's answer. The rest of the path ("/" when
// none) is the path the bot sees. The body crosses as a JSON string, so
// bytes that are not UTF-8 do not survive; it may be at most 8 MiB.
//
// It fails with ErrNoTunnel when no `bp dev` is connected to the tunnel,
// with req's context error when that ends first, and with an error saying
// the connection closed when the tunnel ends first.
func (s *Server) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	if req.URL == nil {
		return nil, errors.New("tunnel: request without a URL")
	}
	id, path := splitPath(req.URL.EscapedPath())
	if err := checkID(id); err != nil {
		return nil, err
	}
	t := s.live(id)
	if t == nil {
		return nil, fmt.Errorf("%w to tunnel %s: run `bp dev --tunnelUrl` for this bot", ErrNoTunnel, id)
	}
	body, err := readBody(req)
	if err != nil {
		return nil, fmt.Errorf("tunnel %s: %w", id, err)
	}

	method := req.Method
	if method == "" {
		method = http.MethodGet // as net/http reads an empty Method
	}
	rid := strconv.FormatUint(s.seq.Add(1), 10)
	frame, err := json.Marshal(requestFrame{
		Type: "request", ID: rid, Method: method, Path: path,
		Query: req.URL.RawQuery, Headers: toFrame(req.Header), Body: body,
	})
	if err != nil {
		return nil, fmt.Errorf("tunnel %s: %w", id, err)
	}
	ch := t.await(rid)
	defer t.forget(rid)
	ctx := req.Context()
	if err := t.send(ctx, frame); err != nil {
		return nil, err
	}
	select {
	case f := <-ch:
		return response(f, req), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("tunnel %s: %w", id, ctx.Err())
	case <-t.done:
		return nil, t.closedErr()
	}
}

// splitPath cuts "/<id>/rest" into the tunnel id and "/rest".
func splitPath(p string) (id, rest string) {
	p = strings.TrimPrefix(p, "/")
	id, rest, ok := strings.Cut(p, "/")
	if !ok {
		return id, "/"
	}
	return id, "/" + rest
}

func readBody(req *http.Request) (string, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return "", nil
	}
	b, err := io.ReadAll(io.LimitReader(req.Body, maxMessage+1))
	if err != nil {
		return "", fmt.Errorf("reading the request body: %w", err)
	}
	if len(b) > maxMessage {
		return "", fmt.Errorf("request body over %d MiB", maxMessage>>20)
	}
	return string(b), nil
}

// response turns a response frame into the answer to req.
func response(f inbound, req *http.Request) *http.Response {
	status := int(*f.Status)
	var body string
	if f.Body != nil {
		body = *f.Body
	}
	return &http.Response{
		Status:     strings.TrimSpace(strconv.Itoa(status) + " " + http.StatusText(status)),
		StatusCode: status,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        fromFrame(f.Headers),
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
