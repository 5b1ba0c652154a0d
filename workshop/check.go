package workshop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"unicode/utf8"
)

// Check is what the server's checker said of a learner's handler on one
// exercise: the verdict it computed, never one a browser sent.
type Check struct {
	Exercise string
	Passed   bool
	// Counterexample is, for a failed check, the script that breaks the
	// handler. Playground is the playground state with the learner's
	// handler (a query string web's URL codec wrote): for a failure, its
	// counterexample (the class view's "show it to the class"); for a pass,
	// the handler that passed (the drill-down's latest handler).
	Counterexample string
	Playground     string
}

// RecordCheck records a check the server ran for a learner in a room
// (from the form or the API, with JavaScript or without), as an
// exercise_checked event with Source server. Every call is one attempt:
// two checks on one page are two. It refuses an exercise the room does
// not cover (ErrNotInRoom: not a room exercise, nothing to record) and a
// room that ended (ErrRoomEnded); web ignores both, since the learner's
// check itself succeeded. It is not limited per seat: the check it
// follows was admitted and charged already.
func (s *Service) RecordCheck(ctx context.Context, l Learner, c Check) (Event, error) {
	if err := checkSlug("exercise", c.Exercise); err != nil || c.Exercise == "" {
		return Event{}, inputErrorf("exercise", "a check names its exercise's id")
	}
	if c.Passed {
		c.Counterexample = ""
	}
	if !utf8.ValidString(c.Counterexample) || len(c.Counterexample) > maxDetailBytes {
		c.Counterexample = truncateUTF8(c.Counterexample, maxDetailBytes)
	}
	if !utf8.ValidString(c.Playground) || len(c.Playground) > MaxPlaygroundBytes {
		c.Playground = "" // the link is a convenience: too long, it is left out
	}
	room, err := s.room(ctx, l.RoomID)
	if err != nil {
		return Event{}, err
	}
	e := Event{Kind: KindExerciseChecked, RoomID: l.RoomID, LearnerID: l.ID, Exercise: c.Exercise,
		Passed: c.Passed, Detail: c.Counterexample, Playground: c.Playground, Source: SourceServer}
	if err := checkInRoom(room, e); err != nil {
		return Event{}, err
	}
	stored, _, err := s.append(ctx, checkKey(), e)
	return stored, err
}

// checkKey is the idempotency key of a check the server records: each
// check is an attempt of its own, so each gets a new key (128 random bits;
// a browser's keys are its own, in the same space, and cannot guess one).
func checkKey() Key {
	var b [16]byte
	rand.Read(b[:])
	return Key("server-check-" + hex.EncodeToString(b[:]))
}

// truncateUTF8 cuts s to at most n bytes of valid UTF-8.
func truncateUTF8(s string, n int) string {
	s = string([]rune(s)) // invalid bytes become U+FFFD
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}
