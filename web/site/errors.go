package site

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"idemlab/playground"
	"idemlab/workshop"
)

// Error is a failed request as the one error path (Server.serveError)
// answers it: with the error page, or with {"error", "field"} under /api/.
// Handlers return one (notFoundf, invalidf, cannotRun, or a literal) for what
// the visitor can fix; any other error is ours.
type Error struct {
	// status is the HTTP status. 0 leaves it to err (see classify): a
	// *playground.InputError is the visitor's 400, anything else our 500.
	Status int
	// message is what the visitor reads, in their terms. With status 0 and
	// an input error, it is the lead-in before the engine's message.
	Message string
	Field   string // the request field to blame, for API answers
	Action  *Link  // a way forward on the error page, e.g. a scenario's start
	Err     error  // the cause: logged for a 500, never shown as such
	// retryAfter, when positive, is sent as Retry-After (seconds): the
	// admission path's refusals (busy 503, rate 429).
	RetryAfter int
}

// Link is a labelled URL (path inside the site, or absolute).
type Link struct {
	Label string
	Href  string
}

func (e *Error) Error() string {
	switch {
	case e.Err == nil:
		return e.Message
	case e.Message == "":
		return e.Err.Error()
	}
	return e.Message + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// StatusClientClosedRequest is the status logged when the client went away
// before its answer was ready (nginx's code): nobody reads the answer, and
// it is not our failure.
const StatusClientClosedRequest = 499

// storeUnavailableMessage answers a workshop request while the workshop
// store cannot be reached, with Retry-After: storeRetryAfter (seconds).
const (
	storeUnavailableMessage = "The workshop store is unavailable; retrying. Lessons and playgrounds still work; try this again in a few seconds."
	storeRetryAfter         = 2
)

// InternalMessage is all a visitor learns of a failure of ours.
const InternalMessage = "Something went wrong on our side."

// NotFoundf reports that what the visitor asked for does not exist.
func NotFoundf(format string, args ...any) error {
	return &Error{Status: http.StatusNotFound, Message: fmt.Sprintf(format, args...)}
}

// Invalidf reports a request the visitor can fix; action, if not nil, is
// offered as the way back.
func Invalidf(action *Link, format string, args ...any) error {
	return &Error{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, args...), Action: action}
}

// CannotRun reports that the playground could not run a link: the visitor's
// fault (a 400 quoting the engine) when err is a *playground.InputError,
// ours otherwise. action leads back to a state that runs.
func CannotRun(action *Link, err error) error {
	return &Error{Message: "The playground cannot run this link.", Action: action, Err: err}
}

// Classify decides the status and message of any error a handler returned:
// the one place an engine error becomes a status.
func Classify(r *http.Request, err error) Error {
	var se *Error
	if !errors.As(err, &se) {
		se = &Error{Err: err}
	}
	out := *se
	if out.Status == 0 {
		var input *playground.InputError
		switch {
		case errors.As(out.Err, &input):
			out.Status = http.StatusBadRequest
			out.Message = strings.TrimSpace(out.Message + " " + input.Error())
			out.Field = cmp.Or(out.Field, input.Field)
		case errors.Is(out.Err, workshop.ErrStoreUnavailable):
			// A shared database restarting: no mistake of the visitor's,
			// and the same request will work again in a moment.
			out.Status = http.StatusServiceUnavailable
			out.Message = storeUnavailableMessage
			out.RetryAfter = storeRetryAfter
		case r.Context().Err() != nil:
			out.Status = StatusClientClosedRequest
			out.Message = "The request was cancelled before its answer was ready."
		default:
			out.Status = http.StatusInternalServerError
		}
	}
	if out.Status == http.StatusInternalServerError {
		out.Message, out.Field, out.Action = InternalMessage, "", nil
	}
	return out
}
