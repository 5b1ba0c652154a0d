package web

import (
	"errors"
	"fmt"
	"net/http"
)

// errorKind says what went wrong from the visitor's point of view, and so
// which status and page they get.
type errorKind int

const (
	kindInternal         errorKind = iota // our fault: logged, a plain 500 page
	kindNotFound                          // 404: the thing asked for does not exist
	kindInvalid                           // 400: the request cannot be understood (bad query, bad script)
	kindMethodNotAllowed                  // 405: the path exists, the method does not
	kindForbidden                         // 403: refused, e.g. a cross-origin POST
)

// status is the HTTP status code of a kind.
func (k errorKind) status() int {
	switch k {
	case kindNotFound:
		return http.StatusNotFound
	case kindInvalid:
		return http.StatusBadRequest
	case kindMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case kindForbidden:
		return http.StatusForbidden
	default:
		return http.StatusInternalServerError
	}
}

// pageError is the error handlers return. Message is shown to the visitor, so
// it must say what is wrong in their terms; err, if any, is only logged.
type pageError struct {
	kind    errorKind
	message string
	action  *link // an optional way forward, e.g. back to a scenario's start
	err     error
}

// link is a labelled URL (path inside the site, or absolute).
type link struct {
	Label string
	Href  string
}

func (e *pageError) Error() string {
	if e.err != nil {
		return e.message + ": " + e.err.Error()
	}
	return e.message
}

func (e *pageError) Unwrap() error { return e.err }

// notFoundf reports that what the visitor asked for does not exist.
func notFoundf(format string, args ...any) error {
	return &pageError{kind: kindNotFound, message: fmt.Sprintf(format, args...)}
}

// invalidf reports a request the visitor can fix; action, if not nil, is
// offered as the way back.
func invalidf(action *link, format string, args ...any) error {
	return &pageError{kind: kindInvalid, message: fmt.Sprintf(format, args...), action: action}
}

// asPageError classifies any error: a *pageError keeps its kind, anything
// else is internal.
func asPageError(err error) *pageError {
	var pe *pageError
	if errors.As(err, &pe) {
		return pe
	}
	return &pageError{kind: kindInternal, message: "Something went wrong on our side.", err: err}
}
