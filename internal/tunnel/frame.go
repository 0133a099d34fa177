package tunnel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
)

// The frames follow @bpinternal/tunnel's zod schemas (tunnelRequestSchema,
// tunnelResponseSchema, helloSchema).

var helloFrame = []byte(`{"type":"hello"}`)

// requestFrame is one HTTP request sent down a tunnel.
type requestFrame struct {
	Type    string                 `json:"type"`
	ID      string                 `json:"id"`
	Method  string                 `json:"method"`
	Path    string                 `json:"path"`
	Query   string                 `json:"query,omitempty"`
	Headers map[string]headerValue `json:"headers,omitempty"`
	Body    string                 `json:"body,omitempty"`
}

// inbound is a frame from `bp dev`: a hello or a response. parseFrame
// guarantees a response has RequestID and Status.
type inbound struct {
	Type      string                 `json:"type"`
	RequestID *string                `json:"requestId"`
	Status    *float64               `json:"status"`
	Headers   map[string]headerValue `json:"headers"`
	Body      *string                `json:"body"`
}

// parseFrame reads a frame from `bp dev`; an error means the tunnel must
// close with 4002. It never quotes the frame: bodies stay out of logs.
func parseFrame(data []byte) (inbound, error) {
	var f inbound
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("not a frame: %w", err)
	}
	switch f.Type {
	case "hello":
		return f, nil
	case "response", "": // the schema keeps type optional for older clients
	default:
		return f, fmt.Errorf("unknown frame type %.40q", f.Type)
	}
	switch {
	case f.RequestID == nil:
		return f, errors.New("response without requestId")
	case f.Status == nil:
		return f, errors.New("response without status")
	case *f.Status != math.Trunc(*f.Status) || *f.Status < 100 || *f.Status > 999:
		return f, fmt.Errorf("response status %v is not an HTTP status", *f.Status)
	}
	return f, nil
}

// headerValue is a header's values: one is a JSON string, several an
// array, as Node writes them.
type headerValue []string

func (h headerValue) MarshalJSON() ([]byte, error) {
	if len(h) == 1 {
		return json.Marshal(h[0])
	}
	return json.Marshal([]string(h))
}

// UnmarshalJSON also takes numbers and null: the CLI copies axios's header
// values as they are, and content-length may come as a number.
func (h *headerValue) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return err
	}
	one := func(v any) (string, bool) {
		switch x := v.(type) {
		case string:
			return x, true
		case json.Number:
			return x.String(), true
		}
		return "", false
	}
	if v == nil {
		*h = nil
		return nil
	}
	if s, ok := one(v); ok {
		*h = headerValue{s}
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return errors.New("a header value must be a string or an array of strings")
	}
	out := make(headerValue, 0, len(list))
	for _, e := range list {
		s, ok := one(e)
		if !ok {
			return errors.New("a header value must be a string or an array of strings")
		}
		out = append(out, s)
	}
	*h = out
	return nil
}

// framing names the headers that describe a message's bytes on the wire
// rather than its content. The body crosses the tunnel as a JSON string and
// is framed again on the other side (axios sets its own length and
// inflates gzip), so these would describe the wrong bytes.
var framing = map[string]bool{
	"Connection": true, "Content-Length": true, "Keep-Alive": true, "Proxy-Connection": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

// toFrame gives h's headers, minus framing, as a frame's headers.
func toFrame(h http.Header) map[string]headerValue {
	out := make(map[string]headerValue, len(h))
	for k, vs := range h {
		if len(vs) > 0 && !framing[http.CanonicalHeaderKey(k)] {
			out[k] = headerValue(vs)
		}
	}
	return out
}

// fromFrame gives a frame's headers, minus framing, as an http.Header.
func fromFrame(m map[string]headerValue) http.Header {
	h := make(http.Header, len(m))
	for k, vs := range m {
		if framing[http.CanonicalHeaderKey(k)] {
			continue
		}
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return h
}
