package workshopweb

import (
	"errors"
	"fmt"
	"idemlab/web/site"
	"net/http"
	"strconv"
	"sync"

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

// Live streams (the class view's and the learners' server-sent events) each
// hold a connection for as long as the page is open, so their number is
// capped, or anyone with a room code could open thousands and take every
// file descriptor the server has:
//
//   - per seat: a learner's pages of the room (one stream per open tab),
//     and the instructor's views of one room, count as one seat;
//   - per room: every stream of the room, learners' and instructor's;
//   - per address: every stream from one address (a class behind one NAT
//     is one address: the cap is half the default connections per address,
//     -conns-per-address, so that its pages still load).
//
// A stream past a cap is refused before it starts with 429 and
// Retry-After, and a message that names the cap: the streams already open
// are never closed for it, so that nobody can push a learner's page off
// its feed. A refused EventSource opens again by itself after a pause
// (workshop.js), and is let in once one of the pages holding its share
// has closed.
const (
	StreamsPerSeat    = 8
	StreamsPerRoom    = 2048 // a full room of 1,000 seats with two pages each
	StreamsPerAddress = 256
	streamRetryAfter  = 10 // seconds
)

// streamCaps counts the open streams by seat, room and address. The zero
// value counts with the default caps.
type streamCaps struct {
	perSeat, perRoom, perAddress int // 0: the default

	mu   sync.Mutex
	open map[streamKey]int
}

// streamKey is what a stream counts against: a seat ("learner 12",
// "instructor of room 3"), a room, or an address.
type streamKey struct {
	kind string // "seat", "room", "address"
	who  string
}

// take counts one more stream for seat in room from address, or refuses
// it with a 429 naming the cap it would pass; release undoes it (once).
func (c *streamCaps) take(seat string, room int64, address string) (release func(), err error) {
	keys := [3]streamKey{{"seat", seat}, {"room", strconv.FormatInt(room, 10)}, {"address", address}}
	caps := [3]int{orDefault(c.perSeat, StreamsPerSeat), orDefault(c.perRoom, StreamsPerRoom), orDefault(c.perAddress, StreamsPerAddress)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open == nil {
		c.open = map[streamKey]int{}
	}
	for i, k := range keys {
		if c.open[k] >= caps[i] {
			return nil, streamRefusal(k.kind, caps[i])
		}
	}
	for _, k := range keys {
		c.open[k]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			for _, k := range keys {
				if c.open[k]--; c.open[k] <= 0 {
					delete(c.open, k)
				}
			}
		})
	}, nil
}

func orDefault(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// streamRefusal is the 429 of a stream past the cap of its kind.
func streamRefusal(kind string, limit int) error {
	var message string
	switch kind {
	case "seat":
		message = fmt.Sprintf("This room is already open in %d pages of yours, the most that follow it live at once. Close a tab of this room you no longer use; this page catches up by itself.", limit)
	case "room":
		message = fmt.Sprintf("This room already has %d live pages open, the most it takes. Close pages of the room you no longer use; this page catches up by itself.", limit)
	default:
		message = fmt.Sprintf("Your address (a shared network) already has %d live workshop pages open, the most one address may. Close pages you no longer use; this page catches up by itself.", limit)
	}
	return &site.Error{Status: http.StatusTooManyRequests, RetryAfter: streamRetryAfter, Message: message}
}
