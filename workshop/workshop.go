// Package workshop owns workshop mode: rooms that learners join with a short
// code, their progress events, the instructor's pace and chaos pushes, the
// live fan-out of a room's events, the class view computed from them, the
// export, and retention. It keeps everything behind the Store interface, with
// a conformance suite (workshop/storetest) that every backend's tests call:
// workshop/sqlitestore is the embedded default.
//
// Idemlab is itself an idempotent consumer here. A learner's browser sends
// each progress event at least once, with an Idempotency-Key it made; the
// store records the key and the event in one transaction behind a unique
// constraint (see Store.Append), so a retry replays the stored outcome, a
// key reused with another body is refused, and a duplicate that arrives while
// the first is still being recorded is told to retry (Service.Append).
//
// The package knows nothing about HTTP or HTML: web translates requests into
// calls of Service and lays out what it returns.
package workshop

import (
	"errors"
	"fmt"
	"time"
)

// Room is one workshop: what it covers, its join code, and when it ended.
type Room struct {
	ID   int64
	Code Code
	Name string
	// Lessons are the slugs of the lessons the room covers, in order;
	// Exercises the ids of its exercises.
	Lessons   []string
	Exercises []string
	CreatedAt time.Time
	// EndedAt is zero while the room is open.
	EndedAt time.Time
}

// Open tells whether learners may still join and send events.
func (r Room) Open() bool { return r.EndedAt.IsZero() }

// Learner is one person in one room, known by a display name. Token is the
// bearer secret of their resume link and cookie.
type Learner struct {
	ID       int64
	RoomID   int64
	Name     string
	Token    Token
	JoinedAt time.Time
}

// Errors a Store or the Service returns; web maps each to a status.
var (
	// ErrNotFound: no such room or learner (or it was deleted).
	ErrNotFound = errors.New("workshop: not found")
	// ErrRoomEnded: the room no longer takes joins or events.
	ErrRoomEnded = errors.New("workshop: the room has ended")
	// ErrKeyReused: an idempotency key came back with a different body.
	ErrKeyReused = errors.New("workshop: idempotency key reused with a different request")
	// ErrKeyInProgress: a request with the same key is being recorded now.
	ErrKeyInProgress = errors.New("workshop: a request with this idempotency key is in progress")
	// ErrStoreUnavailable: the store cannot be reached now (a shared
	// database restarting, say); the request may be retried as it is.
	ErrStoreUnavailable = errors.New("workshop: the store is unavailable")
)

// InputError is a request a person can fix; Field names what is wrong.
// Err, when set, is the rule broken (ErrNotInRoom), for errors.Is.
type InputError struct {
	Field string
	Msg   string
	Err   error
}

func (e *InputError) Error() string { return e.Field + ": " + e.Msg }

func (e *InputError) Unwrap() error { return e.Err }

func inputErrorf(field, format string, args ...any) error {
	return &InputError{Field: field, Msg: fmt.Sprintf(format, args...)}
}
