// Package httpapi serves the HTTP surfaces: one route table per surface, the
// middleware they share, and the one function that turns an error into the
// wire error body.
package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/botplatform/botplatform/internal/platform"
)

// errorBody is the error shape both official clients parse (compat-notes §0).
type errorBody struct {
	ID       string         `json:"id"`
	Code     int            `json:"code"`
	Type     string         `json:"type"`
	Message  string         `json:"message"`
	Metadata map[string]any `json:"metadata,omitempty"`
	// RequestID is the response's x-request-id, which the access log line
	// and any error logged for the request carry too.
	RequestID string `json:"requestId,omitempty"`
}

// errorID returns err_YYYYMMDDHHMMSSx + 8 upper-case hex digits.
func errorID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "err_" + now.UTC().Format("20060102150405") + "x" + strings.ToUpper(hex.EncodeToString(b[:]))
}

// writeError is the single place where errors become responses. Errors meant
// for the caller (*platform.Error) keep their message; anything else is a 500
// whose cause only the log sees.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var maxErr *http.MaxBytesError
	e, ok := platform.AsError(err)
	switch {
	case ok:
	case errors.As(err, &maxErr):
		e = platform.Errorf(platform.TypePayloadTooLarge, "request body exceeds the limit of %d bytes for this API", maxErr.Limit)
	default:
		id := w.Header().Get("x-request-id")
		log.ErrorContext(r.Context(), "internal error", "err", err, "method", r.Method, "path", r.URL.Path, "request_id", id)
		e = platform.Errorf(platform.TypeInternal, "an internal error occurred; request id %s", id)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	}
	body := errorBody{ID: errorID(time.Now()), Code: e.Type.Status(), Type: string(e.Type), Message: e.Message, Metadata: e.Metadata,
		RequestID: w.Header().Get("x-request-id")}
	writeJSON(w, body.Code, body)
}

// writeJSON writes v as the JSON response body with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"id":"err_encoding","code":500,"type":"Internal","message":"response encoding failed"}`)
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
