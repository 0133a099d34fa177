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
	TypeInternal          ErrorType = "Internal"
	TypeUnauthorized      ErrorType = "Unauthorized"
	TypeForbidden         ErrorType = "Forbidden"
	TypePayloadTooLarge   ErrorType = "PayloadTooLarge"
	TypeInvalidPayload    ErrorType = "InvalidPayload"
	TypeUnsupportedMedia  ErrorType = "UnsupportedMediaType"
	TypeMethodNotFound    ErrorType = "MethodNotFound"
	TypeResourceNotFound  ErrorType = "ResourceNotFound"
	TypeInvalidQuery      ErrorType = "InvalidQuery"
	TypeReferenceNotFound ErrorType = "ReferenceNotFound"
	TypeAlreadyExists     ErrorType = "AlreadyExists"
	TypeRateLimited       ErrorType = "RateLimited"
	TypePaymentRequired   ErrorType = "PaymentRequired"
	TypeQuotaExceeded     ErrorType = "QuotaExceeded"
	TypeLimitExceeded     ErrorType = "LimitExceeded"
	TypeResourceGone      ErrorType = "ResourceGone"
	TypeOperationTimeout  ErrorType = "OperationTimeout"
	TypeRuntime           ErrorType = "Runtime"
	// TypeInvalidJSONSchema: a JSON Schema a bot declared does not compile.
	TypeInvalidJSONSchema ErrorType = "InvalidJsonSchema"
	// TypeResourceLocked: others kept writing the resource while this
	// write retried.
	TypeResourceLocked ErrorType = "ResourceLockedConflict"
	// TypeReferenceConstraint: the resource cannot be deleted while another
	// refers to it (an integration version bots installed).
	TypeReferenceConstraint ErrorType = "ReferenceConstraint"
	// TypeUnavailable: what the server depends on does not answer (503,
	// the readiness probe's answer).
	TypeUnavailable ErrorType = "ServiceUnavailable"
)

// ErrorTypes are all the error types this server answers, for the API
// document (internal/openapi), which lists them by status.
var ErrorTypes = []ErrorType{
	TypeInternal, TypeUnauthorized, TypeForbidden, TypePayloadTooLarge, TypeInvalidPayload, TypeUnsupportedMedia,
	TypeMethodNotFound, TypeResourceNotFound, TypeInvalidQuery, TypeReferenceNotFound, TypeAlreadyExists, TypeRateLimited,
	TypePaymentRequired, TypeQuotaExceeded, TypeLimitExceeded, TypeResourceGone, TypeOperationTimeout, TypeRuntime,
	TypeInvalidJSONSchema, TypeResourceLocked, TypeReferenceConstraint, TypeUnavailable,
}

// Status is the HTTP status that goes with each error type (compat-notes §3).
func (t ErrorType) Status() int {
	switch t {
	case TypeUnauthorized:
		return 401
	case TypeForbidden, TypeQuotaExceeded:
		return 403
	case TypePayloadTooLarge, TypeLimitExceeded:
		return 413
	case TypeInvalidPayload, TypeInvalidQuery, TypeReferenceNotFound, TypeRuntime, TypeInvalidJSONSchema:
		return 400
	case TypeUnsupportedMedia:
		return 415
	case TypeMethodNotFound:
		return 405
	case TypeResourceNotFound:
		return 404
	case TypeAlreadyExists, TypeResourceLocked, TypeReferenceConstraint:
		return 409
	case TypeResourceGone:
		return 410
	case TypeRateLimited:
		return 429
	case TypePaymentRequired:
		return 402
	case TypeOperationTimeout:
		return 504
	case TypeUnavailable:
		return 503
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
	return &Error{Type: TypeInvalidPayload, Message: msg}
}

// NotFound is a 404 naming the kind of resource and its id.
func NotFound(kind, id string) *Error {
	return Errorf(TypeResourceNotFound, "%s %q not found", kind, id)
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
