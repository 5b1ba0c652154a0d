package web

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"idemlab/playground"
	"idemlab/workshop"
)

// serverError is a failed request as the one error path (Server.serveError)
// answers it: with the error page, or with {"error", "field"} under /api/.
// Handlers return one (notFoundf, invalidf, cannotRun, or a literal) for what
// the visitor can fix; any other error is ours.
type serverError struct {
	// status is the HTTP status. 0 leaves it to err (see classify): a
	// *playground.InputError is the visitor's 400, anything else our 500.
	status int
	// message is what the visitor reads, in their terms. With status 0 and
	// an input error, it is the lead-in before the engine's message.
	message string
	field   string // the request field to blame, for API answers
	action  *link  // a way forward on the error page, e.g. a scenario's start
	err     error  // the cause: logged for a 500, never shown as such
	// retryAfter, when positive, is sent as Retry-After (seconds): the
	// admission path's refusals (busy 503, rate 429).
	retryAfter int
}

// link is a labelled URL (path inside the site, or absolute).
type link struct {
	Label string
	Href  string
}

func (e *serverError) Error() string {
	switch {
	case e.err == nil:
		return e.message
	case e.message == "":
		return e.err.Error()
	}
	return e.message + ": " + e.err.Error()
}

func (e *serverError) Unwrap() error { return e.err }

// statusClientClosedRequest is the status logged when the client went away
// before its answer was ready (nginx's code): nobody reads the answer, and
// it is not our failure.
const statusClientClosedRequest = 499

// storeUnavailableMessage answers a workshop request while the workshop
// store cannot be reached, with Retry-After: storeRetryAfter (seconds).
const (
	storeUnavailableMessage = "The workshop store is unavailable; retrying. Lessons and playgrounds still work; try this again in a few seconds."
	storeRetryAfter         = 2
)

// internalMessage is all a visitor learns of a failure of ours.
const internalMessage = "Something went wrong on our side."

// notFoundf reports that what the visitor asked for does not exist.
func notFoundf(format string, args ...any) error {
	return &serverError{status: http.StatusNotFound, message: fmt.Sprintf(format, args...)}
}

// invalidf reports a request the visitor can fix; action, if not nil, is
// offered as the way back.
func invalidf(action *link, format string, args ...any) error {
	return &serverError{status: http.StatusBadRequest, message: fmt.Sprintf(format, args...), action: action}
}

// cannotRun reports that the playground could not run a link: the visitor's
// fault (a 400 quoting the engine) when err is a *playground.InputError,
// ours otherwise. action leads back to a state that runs.
func cannotRun(action *link, err error) error {
	return &serverError{message: "The playground cannot run this link.", action: action, err: err}
}

// classify decides the status and message of any error a handler returned:
// the one place an engine error becomes a status.
func classify(r *http.Request, err error) serverError {
	var se *serverError
	if !errors.As(err, &se) {
		se = &serverError{err: err}
	}
	out := *se
	if out.status == 0 {
		var input *playground.InputError
		switch {
		case errors.As(out.err, &input):
			out.status = http.StatusBadRequest
			out.message = strings.TrimSpace(out.message + " " + input.Error())
			out.field = cmp.Or(out.field, input.Field)
		case errors.Is(out.err, workshop.ErrStoreUnavailable):
			// A shared database restarting: no mistake of the visitor's,
			// and the same request will work again in a moment.
			out.status = http.StatusServiceUnavailable
			out.message = storeUnavailableMessage
			out.retryAfter = storeRetryAfter
		case r.Context().Err() != nil:
			out.status = statusClientClosedRequest
			out.message = "The request was cancelled before its answer was ready."
		default:
			out.status = http.StatusInternalServerError
		}
	}
	if out.status == http.StatusInternalServerError {
		out.message, out.field, out.action = internalMessage, "", nil
	}
	return out
}
