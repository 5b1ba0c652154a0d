package workshop

import (
	"context"
	"errors"
	"time"
)

// Store keeps rooms, learners and events. Every method is safe for
// concurrent use, from one process or (for a shared backend) several.
// Every state-changing method is idempotent: called twice with the same key
// (or on the same natural key) it changes nothing the second time and
// returns what the first call returned. workshop/storetest checks all of it.
type Store interface {
	// CreateRoom stores a new room with the given code. A second call with
	// the same key returns the room the first made (ErrKeyReused if its
	// spec differs); a code already in use is ErrCodeTaken.
	CreateRoom(ctx context.Context, key Key, spec RoomSpec, code Code, at time.Time) (Room, error)
	// Room and RoomByCode return ErrNotFound for a missing or deleted room.
	Room(ctx context.Context, id int64) (Room, error)
	RoomByCode(ctx context.Context, code Code) (Room, error)
	// Rooms lists every room, newest first.
	Rooms(ctx context.Context) ([]Room, error)
	// EndRoom marks the room ended and appends one KindRoomEnded event, in
	// one transaction; ending an ended room changes nothing.
	EndRoom(ctx context.Context, id int64, at time.Time) (Room, error)
	// DeleteRoom removes a room with its learners and events; deleting a
	// missing room is not an error.
	DeleteRoom(ctx context.Context, id int64) error
	// DeleteRoomsCreatedBefore removes every room created before t (the
	// retention) and says how many.
	DeleteRoomsCreatedBefore(ctx context.Context, t time.Time) (int, error)

	// Join adds a learner with the given token to an open room. A second
	// call with the same (room, key) returns the learner the first made
	// (ErrKeyReused if the name differs). ErrRoomEnded if the room ended.
	// A new learner comes with a KindJoined event, in the same transaction.
	Join(ctx context.Context, roomID int64, key Key, name string, token Token, at time.Time) (Learner, error)
	// LearnerByToken finds a learner by their resume token (ErrNotFound
	// once removed).
	LearnerByToken(ctx context.Context, token Token) (Learner, error)
	// Learners lists a room's learners in joining order, without the
	// removed.
	Learners(ctx context.Context, roomID int64) ([]Learner, error)
	// RenameLearner changes a learner's display name and appends a
	// KindRenamed event, in one transaction; the same name again changes
	// nothing. ErrNotFound for a learner not (or no longer) in the room.
	RenameLearner(ctx context.Context, roomID, learnerID int64, name string, at time.Time) (Learner, error)
	// RemoveLearner takes a learner out of the room: their token stops
	// working, their events stay, and a KindRemoved event is appended, in
	// one transaction. Removing a removed or missing learner changes nothing.
	RemoveLearner(ctx context.Context, roomID, learnerID int64, at time.Time) error

	// Append records e under the idempotency key (e.RoomID, e.LearnerID,
	// key) and returns it with its ID and time. Key and event are written
	// in one transaction, guarded by a unique constraint and an
	// INSERT … ON CONFLICT DO NOTHING RETURNING (never check-then-insert):
	// of any number of concurrent calls with one key, exactly one records
	// the event. A later call with the same key and the same fingerprint
	// returns the stored event with replayed true; with another fingerprint
	// it returns ErrKeyReused. A new event for an ended room is
	// ErrRoomEnded (a replay of an event stored before the end still is a
	// replay).
	Append(ctx context.Context, key Key, e Event) (stored Event, replayed bool, err error)
	// Events returns up to limit events of a room with ID > after, in ID
	// order; with pushesOnly, only the kinds learners receive.
	Events(ctx context.Context, roomID, after int64, pushesOnly bool, limit int) ([]Event, error)

	// Close releases the store.
	Close() error
}

// ErrCodeTaken: a room with this join code exists; draw another.
var ErrCodeTaken = errors.New("workshop: join code taken")

// RoomSpec is what an instructor fills in to create a room.
type RoomSpec struct {
	Name      string
	Lessons   []string
	Exercises []string
}
