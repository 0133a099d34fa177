package ai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults of Retry.
const (
	DefaultMaxRetryAfter = 30 * time.Second
	DefaultMaxBody       = 64 << 20
)

// maxErrorBody bounds the read of an error response.
const maxErrorBody = 64 << 10

// Retry says how PostJSON tries a request again.
type Retry struct {
	Attempts      int           // attempts in all; less than 1 means 1
	Backoff       time.Duration // wait before the 2nd attempt, doubled before each later one
	MaxRetryAfter time.Duration // longest server Retry-After honoured; 0: DefaultMaxRetryAfter
	Timeout       time.Duration // bound on each attempt; 0: only the client's and ctx's
	MaxBody       int64         // longest response body read; 0: DefaultMaxBody
}

// StatusError is a response with a status other than 2xx.
type StatusError struct {
	Code       int
	Message    string        // the server's message (ServerMessage of the body)
	RetryAfter time.Duration // the server's Retry-After; 0 if none
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Code, http.StatusText(e.Code), e.Message)
}

// Retryable tells whether the same request may pass later: status 429 and
// 5xx.
func (e *StatusError) Retryable() bool {
	return e.Code == http.StatusTooManyRequests || e.Code >= 500
}

// PostJSON posts body, encoded as JSON, to url with "Authorization: Bearer
// <key>" when key is set, and returns the 2xx response's body. A failure
// with status 429 or 5xx, on the network or by r.Timeout is tried again,
// r.Attempts in all: after r.Backoff, doubled each time, or after the
// server's Retry-After when longer (at most r.MaxRetryAfter). The error of
// a failed status is a *StatusError, wrapped, with " (after N attempts)"
// appended when the attempts ran out; ctx's end aborts a wait at once.
func PostJSON(ctx context.Context, client *http.Client, url, key string, body any, r Retry) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding the request: %w", err)
	}
	if client == nil {
		client = http.DefaultClient
	}
	var out []byte
	err = retrying(ctx, r, func() (bool, error) {
		var again bool
		var err error
		out, again, err = post(ctx, client, url, key, b, r)
		return again, err
	})
	return out, err
}

// retrying runs attempt until it succeeds or fails for good (again false),
// r.Attempts times at most, waiting between attempts as PostJSON says.
func retrying(ctx context.Context, r Retry, attempt func() (again bool, err error)) error {
	attempts := max(r.Attempts, 1)
	maxRetryAfter := r.MaxRetryAfter
	if maxRetryAfter <= 0 {
		maxRetryAfter = DefaultMaxRetryAfter
	}
	delay := r.Backoff
	for n := 1; ; n++ {
		again, err := attempt()
		if err == nil {
			return nil
		}
		if !again || ctx.Err() != nil {
			return err
		}
		if n >= attempts {
			return fmt.Errorf("%w (after %d attempts)", err, n)
		}
		wait := delay
		var se *StatusError
		if errors.As(err, &se) && se.RetryAfter > wait {
			wait = min(se.RetryAfter, maxRetryAfter)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (waiting to try again after: %v)", ctx.Err(), err)
		case <-t.C:
		}
		delay *= 2
	}
}

// post sends one request; retry tells whether a failure may pass on a
// later attempt.
func post(ctx context.Context, client *http.Client, url, key string, body []byte, r Retry) (out []byte, retry bool, err error) {
	actx := ctx
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	// timedOut marks an error of the attempt's own deadline, which is
	// worth another attempt.
	timedOut := func(err error) error {
		if ctx.Err() == nil && actx.Err() != nil {
			return fmt.Errorf("no response within %v: %w", r.Timeout, err)
		}
		return err
	}
	req, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, ctx.Err() == nil, timedOut(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		se := &StatusError{Code: resp.StatusCode, Message: ServerMessage(b), RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
		return nil, se.Retryable(), se
	}
	limit := r.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, ctx.Err() == nil, timedOut(fmt.Errorf("reading the response: %w", err))
	}
	if int64(len(b)) > limit {
		return nil, false, fmt.Errorf("the response is larger than %d bytes", limit)
	}
	return b, false, nil
}

// retryAfter parses a Retry-After header: seconds or an HTTP date; 0 if
// absent or past.
func retryAfter(h string) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(h); err == nil {
		if s > 0 {
			return time.Duration(s) * time.Second
		}
		return 0
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// ServerMessage extracts the message of an error response: OpenAI's
// {"error": {"message": ...}}, {"error": "..."} or {"message": ...}, else
// the body itself, shortened to 500 bytes.
func ServerMessage(b []byte) string {
	var r struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(b, &r) == nil {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(r.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case json.Unmarshal(r.Error, &s) == nil && s != "":
			return s
		case r.Message != "":
			return r.Message
		}
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "(no message)"
	}
	if len(s) > 500 {
		cut := 500
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
