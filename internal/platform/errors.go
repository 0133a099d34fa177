// Package platform holds the domain types shared by every surface, the single
// error type the HTTP layer turns into the wire error body, ids and the clock.
package platform

import (
	"errors"
	"fmt"
	"time"
)

// ErrorType is the machine-readable `type` of an error body. The official
// clients choose their error class from it alone.
type ErrorType string

const (
	ErrInternal          ErrorType = "Internal"
	ErrUnauthorized      ErrorType = "Unauthorized"
	ErrForbidden         ErrorType = "Forbidden"
	ErrPayloadTooLarge   ErrorType = "PayloadTooLarge"
	ErrInvalidPayload    ErrorType = "InvalidPayload"
	ErrUnsupportedMedia  ErrorType = "UnsupportedMediaType"
	ErrMethodNotFound    ErrorType = "MethodNotFound"
	ErrResourceNotFound  ErrorType = "ResourceNotFound"
	ErrInvalidQuery      ErrorType = "InvalidQuery"
	ErrReferenceNotFound ErrorType = "ReferenceNotFound"
	ErrAlreadyExists     ErrorType = "AlreadyExists"
	ErrRateLimited       ErrorType = "RateLimited"
	ErrPaymentRequired   ErrorType = "PaymentRequired"
	ErrQuotaExceeded     ErrorType = "QuotaExceeded"
	ErrLimitExceeded     ErrorType = "LimitExceeded"
	ErrResourceGone      ErrorType = "ResourceGone"
	ErrOperationTimeout  ErrorType = "OperationTimeout"
	ErrRuntime           ErrorType = "Runtime"
)

// Status is the HTTP status that goes with each error type (compat-notes §3).
func (t ErrorType) Status() int {
	switch t {
	case ErrUnauthorized:
		return 401
	case ErrForbidden, ErrQuotaExceeded:
		return 403
	case ErrPayloadTooLarge, ErrLimitExceeded:
		return 413
	case ErrInvalidPayload, ErrInvalidQuery, ErrReferenceNotFound, ErrRuntime:
		return 400
	case ErrUnsupportedMedia:
		return 415
	case ErrMethodNotFound:
		return 405
	case ErrResourceNotFound:
		return 404
	case ErrAlreadyExists:
		return 409
	case ErrResourceGone:
		return 410
	case ErrRateLimited:
		return 429
	case ErrPaymentRequired:
		return 402
	case ErrOperationTimeout:
		return 504
	default:
		return 500
	}
}

// Error is an error meant for the caller: its message is safe to show.
// Anything that is not an *Error reaches the caller as 500 Internal.
type Error struct {
	Type     ErrorType
	Message  string
	Metadata map[string]any
	// RetryAfter, when set, is sent as the Retry-After header (429).
	RetryAfter time.Duration
}

func (e *Error) Error() string { return string(e.Type) + ": " + e.Message }

// Errorf builds an *Error of the given type.
func Errorf(t ErrorType, format string, args ...any) *Error {
	return &Error{Type: t, Message: fmt.Sprintf(format, args...)}
}

// Invalid is a 400 InvalidPayload naming the field at fault.
func Invalid(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	return &Error{Type: ErrInvalidPayload, Message: msg}
}

// NotFound is a 404 naming the kind of resource and its id.
func NotFound(kind, id string) *Error {
	return Errorf(ErrResourceNotFound, "%s %q not found", kind, id)
}

// ErrNotFound is returned by stores when a row does not exist; services turn it
// into a NotFound naming the resource.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned by stores when a unique constraint is violated.
var ErrConflict = errors.New("conflict")

// AsError returns the *Error inside err, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
