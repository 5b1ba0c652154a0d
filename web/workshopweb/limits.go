package workshopweb

import (
	"errors"
	"idemlab/web/site"
	"net/http"

	"idemlab/workshop"
)

// instructorGate is the configured gate, or one for the configured key.
func instructorGate(cfg *Config) *workshop.InstructorGate {
	if cfg.Gate != nil {
		return cfg.Gate
	}
	return workshop.NewInstructorGate(cfg.InstructorKey, nil, nil)
}

// checkInstructorKey checks key with the gate, for the request's address:
// nil when it is the instructor key, a 429 with Retry-After when the
// address got it wrong too often, and a 403 otherwise.
func (s *Pages) checkInstructorKey(r *http.Request, ws *State, key string) error {
	ok, retry := ws.gate.Check(r.Context(), s.Limiter.AddressOf(r), key)
	switch {
	case ok:
		return nil
	case retry > 0:
		rerr := &workshop.RateError{What: "wrong instructor keys from this address", RetryAfter: retry}
		return &site.Error{Status: http.StatusTooManyRequests, Field: "key", RetryAfter: rerr.RetrySeconds(),
			Message: "Too many wrong instructor keys from this address. Wait, then open the instructor link the server printed when it started."}
	}
	return wsError(http.StatusForbidden, "key", "This instructor key is wrong. Open the instructor link the server printed when it started (it ends in ?key=…).")
}

// isRateRefusal tells a 429 from other refusals.
func isRateRefusal(err error) bool {
	var se *site.Error
	return errors.As(err, &se) && se.Status == http.StatusTooManyRequests
}

// workshopLimitErr gives workshop's limits their status, or nil for other
// errors: too much sent (429 with Retry-After), a full room (409), an
// event about a lesson or exercise outside the room (422).
func workshopLimitErr(err error) error {
	var rate *workshop.RateError
	var input *workshop.InputError
	switch {
	case errors.As(err, &rate):
		return &site.Error{Status: http.StatusTooManyRequests, RetryAfter: rate.RetrySeconds(),
			Message: "Too many " + rate.What + " in a short time; your work is kept. Try again in a few seconds."}
	case errors.Is(err, workshop.ErrRoomFull):
		return wsError(http.StatusConflict, "code", "This room is full: it has all the learners it takes. Ask your instructor.")
	case errors.Is(err, workshop.ErrNotInRoom) && errors.As(err, &input):
		return wsError(http.StatusUnprocessableEntity, input.Field, input.Error())
	}
	return nil
}
