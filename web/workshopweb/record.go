package workshopweb

import (
	"context"
	"errors"
	"idemlab/web/admit"
	"net/http"
	"strconv"
	"time"

	"idemlab/workshop"
)

// The server records what it saw (DESIGN.md, principle 8): a check run for
// a learner in a room is recorded by the check itself (workshop.RecordCheck),
// never reported by the browser; and a request from a verified seat takes
// its fair share from the seat, not from the address.
//
// A request's seat is found once, by the one seat cache (admit.SeatCache,
// the limiter's Seats): SeatToken reads where the token travels and
// LookupSeat checks it against the store; the cache remembers each answer
// for a minute, so a playground click costs no store read.

// SeatCache is the cache of verified seats that the server's limiter and
// this package share, or nil when workshop mode is off.
func (s *Pages) SeatCache() *admit.SeatCache {
	if s.Workshop == nil {
		return nil
	}
	return admit.NewSeatCache(s.seatToken, s.lookupSeat)
}

// seatToken is the learner token a request carries (the room cookie, or
// ws= in an embed's URL), or "".
func (s *Pages) seatToken(r *http.Request) string {
	if _, err := r.Cookie(LearnerCookie); err != nil && !r.URL.Query().Has(learnerTokenParam) {
		return ""
	}
	tok, _, err := learnerTokenFrom(r)
	if err != nil {
		return ""
	}
	return string(tok)
}

// lookupSeat checks a token against the store: its learner's id, ok false
// for no seat (or while the store is away: asked again next time, the
// request meanwhile charged to its address).
func (s *Pages) lookupSeat(ctx context.Context, token string) (string, bool) {
	_, l, err := s.Workshop.svc.Resume(ctx, workshop.Token(token))
	if err != nil {
		return "", false
	}
	return strconv.FormatInt(l.ID, 10), true
}

// seat is the learner a request comes from, verified: the cache says
// whether it is a seat (no store read for a request without one), and the
// store gives the learner. It never fails the request.
func (s *Pages) seat(r *http.Request) (workshop.Learner, bool) {
	if s.Workshop == nil || s.Limiter == nil || s.Limiter.Seats == nil || s.Limiter.Seats.SeatOf(r) == "" {
		return workshop.Learner{}, false
	}
	_, l, err := s.Workshop.svc.Resume(r.Context(), workshop.Token(s.seatToken(r)))
	if err != nil {
		return workshop.Learner{}, false
	}
	return l, true
}

// forgetSeat drops a removed learner's remembered seat: their cookie gets
// no share of its own from the next request on.
func (s *Pages) forgetSeat(learnerID int64) {
	if s.Limiter != nil && s.Limiter.Seats != nil {
		s.Limiter.Seats.Forget(strconv.FormatInt(learnerID, 10))
	}
}

// RecordCheck records a check the server ran, for a request from a seat.
// The learner's check succeeded whatever happens here: an exercise outside
// the room, a room that ended or a learner removed record nothing, and
// anything else is logged.
func (s *Pages) RecordCheck(r *http.Request, c workshop.Check) {
	l, ok := s.seat(r)
	if !ok {
		return
	}
	// The check's answer is on its way: recording outlives a client that
	// stops waiting now.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
	defer cancel()
	_, err := s.Workshop.svc.RecordCheck(ctx, l, c)
	switch {
	case err == nil, errors.Is(err, workshop.ErrNotInRoom), errors.Is(err, workshop.ErrRoomEnded), errors.Is(err, workshop.ErrNotFound):
	default:
		s.Logger.Warn("recording a learner's check", "learner", l.ID, "exercise", c.Exercise, "err", err)
	}
}
