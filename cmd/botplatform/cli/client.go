package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// client calls a server's public APIs with one token: the Admin API for
// the workspace, the Files API for one bot at a time.
type client struct {
	base        string // http://host:port, no trailing slash
	token       string
	workspaceID string
	http        *http.Client
	userAgent   string
	notify      func(string) // told of a retry, when set
}

// APIError is an error answered by the server in the standard error body.
type APIError struct {
	Status    int
	Type      string `json:"type"`
	Message   string `json:"message"`
	RequestID string `json:"requestId"`
}

func (e *APIError) Error() string { return e.Type + ": " + e.Message }

// call is one request: exactly one of the headers' targets is set.
type call struct {
	method, path string
	query        url.Values
	botID        string // Files API: x-bot-id; otherwise x-workspace-id
	userKey      string // Chat API: x-user-key, and no token
	anonymous    bool   // a signed URL: no credentials at all
	accept       string // an Accept header (text/event-stream)
	body, out    any
	// content is a raw body of contentLength bytes (a file's content).
	content       io.Reader
	contentLength int64
}

// do sends c and decodes a 2xx JSON answer into c.out.
func (cl *client) do(ctx context.Context, c call) error {
	resp, err := cl.send(ctx, c)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if c.out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(c.out); err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", c.method, c.path, err)
	}
	return nil
}

// Retries of a call refused by a rate limit (429): an idempotent call
// (GET, PUT, DELETE) with a JSON body or none is sent again after the
// server's Retry-After, as the official client does when asked to retry.
const (
	maxRetries    = 3
	maxRetryAfter = 2 * time.Minute // a longer wait is reported, not waited for
)

// send sends c and returns a 2xx response, whose body the caller closes.
func (cl *client) send(ctx context.Context, c call) (*http.Response, error) {
	var payload []byte
	if c.body != nil {
		b, err := json.Marshal(c.body)
		if err != nil {
			return nil, err
		}
		payload = b
	}
	for attempt := 0; ; attempt++ {
		resp, err := cl.sendOnce(ctx, c, payload)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode/100 == 2 {
			return resp, nil
		}
		wait, retry := retryAfter(resp, c, attempt)
		err = answerError(resp)
		resp.Body.Close()
		if !retry {
			return nil, err
		}
		if cl.notify != nil {
			cl.notify(fmt.Sprintf("%v; retrying in %s", err, wait))
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
	}
}

// retryAfter tells whether the answer to c is to be retried, and when.
func retryAfter(resp *http.Response, c call, attempt int) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests || attempt >= maxRetries || c.content != nil {
		return 0, false
	}
	switch c.method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete:
	default:
		return 0, false // not idempotent: sent twice, it could act twice
	}
	secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil || secs < 0 {
		secs = 1
	}
	wait := time.Duration(secs) * time.Second
	return wait, wait <= maxRetryAfter
}

func (cl *client) sendOnce(ctx context.Context, c call, payload []byte) (*http.Response, error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	if c.content != nil {
		body = c.content
	}
	u := c.path
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		u = cl.base + c.path
	}
	if len(c.query) > 0 {
		u += "?" + c.query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, c.method, u, body)
	if err != nil {
		return nil, err
	}
	if c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.content != nil {
		req.ContentLength = c.contentLength
		if c.contentLength == 0 {
			req.Body = http.NoBody
		}
	}
	req.Header.Set("User-Agent", cl.userAgent)
	if c.accept != "" {
		req.Header.Set("Accept", c.accept)
	}
	switch {
	case c.anonymous:
	case c.userKey != "":
		req.Header.Set("x-user-key", c.userKey)
	case c.botID != "":
		req.Header.Set("Authorization", "Bearer "+cl.token)
		req.Header.Set("x-bot-id", c.botID)
	default:
		req.Header.Set("Authorization", "Bearer "+cl.token)
		req.Header.Set("x-workspace-id", cl.workspaceID)
	}
	return cl.http.Do(req)
}

// answerError reads the standard error body of a failed answer; another
// body (a proxy's page, say) is reported by its status.
func answerError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &APIError{Status: resp.StatusCode}
	if json.Unmarshal(b, e) != nil || e.Type == "" {
		msg := strings.TrimSpace(string(b))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return fmt.Errorf("%s %s: %s %s", resp.Request.Method, resp.Request.URL.Redacted(), resp.Status, msg)
	}
	return e
}

// isNotFound tells whether err is the server's 404.
func isNotFound(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// esc escapes one path segment.
func esc(s string) string { return url.PathEscape(s) }
