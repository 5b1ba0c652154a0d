package workshopweb

import (
	"context"
	"errors"
	"idemlab/web/admit"
	"net/http"
	"strconv"
	"sync"
	"time"

	"idemlab/workshop"
)

// The server records what it saw (DESIGN.md, principle 8): a check run for
// a learner in a room is recorded by the check itself (workshop.RecordCheck),
// never reported by the browser; and a request from a verified seat takes
// its fair share from the seat, not from the address (admit.WithSeat).

// seatTTL is how long a verified seat is remembered for a token, so that
// a playground click costs no store read; a removed learner's cookie keeps
// its share at most this long (their events are refused at once).
const seatTTL = time.Minute

// maxSeatCache bounds the seats remembered.
const maxSeatCache = 10_000

type seatEntry struct {
	learner workshop.Learner
	until   time.Time
}

// seatCache remembers tokens verified against the store.
type seatCache struct {
	mu    sync.Mutex
	seats map[workshop.Token]seatEntry
}

// seat is the learner a request comes from (the room cookie, or ws= in an
// embed's URL), verified against the store; ok false when the request has
// no seat, a wrong one, or workshop mode is off. It never fails the
// request: a seat only adds to what the request gets.
func (s *Pages) seat(r *http.Request) (workshop.Learner, bool) {
	if s.Workshop == nil {
		return workshop.Learner{}, false
	}
	if _, err := r.Cookie(LearnerCookie); err != nil && !r.URL.Query().Has(learnerTokenParam) {
		return workshop.Learner{}, false
	}
	tok, _, err := learnerTokenFrom(r)
	if err != nil {
		return workshop.Learner{}, false
	}
	ws := s.Workshop
	now := time.Now()
	ws.seats.mu.Lock()
	e, ok := ws.seats.seats[tok]
	ws.seats.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.learner, e.learner.ID != 0 // 0: a token known to be no seat
	}
	_, l, err := ws.svc.Resume(r.Context(), tok)
	if err != nil && !errors.Is(err, workshop.ErrNotFound) {
		return workshop.Learner{}, false // the store is away: ask again next time
	}
	if err != nil {
		l = workshop.Learner{}
	}
	ws.seats.mu.Lock()
	if ws.seats.seats == nil || len(ws.seats.seats) >= maxSeatCache {
		ws.seats.seats = make(map[workshop.Token]seatEntry)
	}
	ws.seats.seats[tok] = seatEntry{learner: l, until: now.Add(seatTTL)}
	ws.seats.mu.Unlock()
	return l, l.ID != 0
}

// forgetSeat drops a learner's remembered seat (removed from the room).
func (ws *State) forgetSeat(learnerID int64) {
	ws.seats.mu.Lock()
	defer ws.seats.mu.Unlock()
	for tok, e := range ws.seats.seats {
		if e.learner.ID == learnerID {
			delete(ws.seats.seats, tok)
		}
	}
}

// withSeat is r carrying its verified seat for the fair share
// (admit.WithSeat), or r itself without one.
func (s *Pages) WithSeat(r *http.Request) *http.Request {
	l, ok := s.seat(r)
	if !ok {
		return r
	}
	return r.WithContext(admit.WithSeat(r.Context(), strconv.FormatInt(l.ID, 10)))
}

// recordCheck records a check the server ran, for a request from a seat.
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
