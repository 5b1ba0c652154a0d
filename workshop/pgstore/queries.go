package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"idemlab/workshop"
)

const roomColumns = `id, code, name, lessons, exercises, created_at, ended_at`

func scanRoom(row pgx.Row) (workshop.Room, error) {
	var r workshop.Room
	var code string
	var created time.Time
	var ended *time.Time
	if err := row.Scan(&r.ID, &code, &r.Name, &r.Lessons, &r.Exercises, &created, &ended); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return r, workshop.ErrNotFound
		}
		return r, err
	}
	r.Code = workshop.Code(code)
	if len(r.Lessons) == 0 {
		r.Lessons = nil
	}
	if len(r.Exercises) == 0 {
		r.Exercises = nil
	}
	r.CreatedAt = created.UTC()
	if ended != nil {
		r.EndedAt = ended.UTC()
	}
	return r, nil
}

// orEmpty stores a nil list as an empty array (the columns are NOT NULL).
func orEmpty(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// inTx runs f in a transaction and commits if it returns nil; a lost
// connection comes back as workshop.ErrStoreUnavailable.
func (s *Store) inTx(ctx context.Context, f func(pgx.Tx) error) error {
	return unavailable(pgx.BeginFunc(ctx, s.pool, f))
}

// CreateRoom implements workshop.Store.
func (s *Store) CreateRoom(ctx context.Context, key workshop.Key, spec workshop.RoomSpec, code workshop.Code, at time.Time) (workshop.Room, error) {
	var room workshop.Room
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		room, err = scanRoom(tx.QueryRow(ctx, `INSERT INTO rooms (code, create_key, name, lessons, exercises, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (create_key) DO NOTHING
			RETURNING `+roomColumns,
			string(code), string(key), spec.Name, orEmpty(spec.Lessons), orEmpty(spec.Exercises), ms(at)))
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.ConstraintName == "rooms_code_key" {
			return workshop.ErrCodeTaken
		}
		if !errors.Is(err, workshop.ErrNotFound) {
			return err
		}
		// The key was used before: READ COMMITTED lets this statement see
		// the row a concurrent insert with the key committed.
		room, err = scanRoom(tx.QueryRow(ctx, `SELECT `+roomColumns+` FROM rooms WHERE create_key = $1`, string(key)))
		if err == nil && (room.Name != spec.Name || !slices.Equal(room.Lessons, spec.Lessons) || !slices.Equal(room.Exercises, spec.Exercises)) {
			return workshop.ErrKeyReused
		}
		return err // ErrNotFound: created and deleted since
	})
	return room, err
}

// Room implements workshop.Store.
func (s *Store) Room(ctx context.Context, id int64) (workshop.Room, error) {
	room, err := scanRoom(s.pool.QueryRow(ctx, `SELECT `+roomColumns+` FROM rooms WHERE id = $1`, id))
	return room, unavailable(err)
}

// RoomByCode implements workshop.Store.
func (s *Store) RoomByCode(ctx context.Context, code workshop.Code) (workshop.Room, error) {
	room, err := scanRoom(s.pool.QueryRow(ctx, `SELECT `+roomColumns+` FROM rooms WHERE code = $1`, string(code)))
	return room, unavailable(err)
}

// Rooms implements workshop.Store.
func (s *Store) Rooms(ctx context.Context) ([]workshop.Room, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+roomColumns+` FROM rooms ORDER BY id DESC`)
	rooms, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (workshop.Room, error) { return scanRoom(row) })
	return rooms, unavailable(err)
}

// Idempotency keys of the events the store records itself. Clients' keys
// have at least 8 characters, so they never collide with these.
const (
	roomEndedKey = "ended"
	joinedKey    = "joined"
)

// lockRoom locks an open or ended room's row until the transaction ends
// and says when it ended. Every write of a room's events takes it first:
// event ids come from one sequence, and without the lock a transaction
// could commit id 8 before another commits id 7, and a follower that had
// read up to 8 would never see 7. With it, a room's ids commit in order.
// FOR NO KEY UPDATE leaves inserts of other rows referencing the room free.
func lockRoom(ctx context.Context, tx pgx.Tx, roomID int64) (ended *time.Time, err error) {
	err = tx.QueryRow(ctx, `SELECT ended_at FROM rooms WHERE id = $1 FOR NO KEY UPDATE`, roomID).Scan(&ended)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, workshop.ErrNotFound
	}
	return ended, err
}

// EndRoom implements workshop.Store.
func (s *Store) EndRoom(ctx context.Context, id int64, at time.Time) (workshop.Room, error) {
	var room workshop.Room
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		ended, err := lockRoom(ctx, tx, id)
		if err != nil {
			return err
		}
		if ended == nil {
			if _, err := tx.Exec(ctx, `UPDATE rooms SET ended_at = $1 WHERE id = $2`, ms(at), id); err != nil {
				return err
			}
			ev := workshop.Event{RoomID: id, Kind: workshop.KindRoomEnded, At: at, Source: workshop.SourceServer}
			if _, err := insertEvent(ctx, tx, roomEndedKey, ev); err != nil {
				return err
			}
		}
		room, err = scanRoom(tx.QueryRow(ctx, `SELECT `+roomColumns+` FROM rooms WHERE id = $1`, id))
		return err
	})
	return room, err
}

// DeleteRoom implements workshop.Store.
func (s *Store) DeleteRoom(ctx context.Context, id int64) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM rooms WHERE id = $1`, id)
		if err == nil && tag.RowsAffected() == 1 {
			err = notify(ctx, tx, id, 0, deleted)
		}
		return err
	})
}

// DeleteRoomsCreatedBefore implements workshop.Store.
func (s *Store) DeleteRoomsCreatedBefore(ctx context.Context, t time.Time) (int, error) {
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `DELETE FROM rooms WHERE created_at < $1 RETURNING id`, ms(t))
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		for _, id := range ids {
			if err == nil {
				err = notify(ctx, tx, id, 0, deleted)
			}
		}
		n = len(ids)
		return err
	})
	return n, err
}

const learnerColumns = `id, room_id, name, token, joined_at`

func scanLearner(row pgx.Row) (workshop.Learner, error) {
	var l workshop.Learner
	var token string
	var joined time.Time
	if err := row.Scan(&l.ID, &l.RoomID, &l.Name, &token, &joined); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return l, workshop.ErrNotFound
		}
		return l, err
	}
	l.Token = workshop.Token(token)
	l.JoinedAt = joined.UTC()
	return l, nil
}

// Join implements workshop.Store.
func (s *Store) Join(ctx context.Context, roomID int64, key workshop.Key, name string, token workshop.Token, at time.Time) (workshop.Learner, error) {
	var l workshop.Learner
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		ended, err := lockRoom(ctx, tx, roomID)
		if err != nil {
			return err
		}
		if ended == nil {
			l, err = scanLearner(tx.QueryRow(ctx, `INSERT INTO learners (room_id, join_key, name, token, joined_at)
				VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (room_id, join_key) DO NOTHING
				RETURNING `+learnerColumns, roomID, string(key), name, string(token), ms(at)))
			if err == nil {
				_, err = insertEvent(ctx, tx, joinedKey, workshop.Event{RoomID: roomID, LearnerID: l.ID, Kind: workshop.KindJoined, At: at, Source: workshop.SourceServer})
				return err
			}
			if !errors.Is(err, workshop.ErrNotFound) {
				return err
			}
		}
		l, err = scanLearner(tx.QueryRow(ctx, `SELECT `+learnerColumns+` FROM learners WHERE room_id = $1 AND join_key = $2`, roomID, string(key)))
		switch {
		case errors.Is(err, workshop.ErrNotFound) && ended != nil:
			return workshop.ErrRoomEnded
		case err == nil && l.Name != name:
			return workshop.ErrKeyReused
		}
		return err
	})
	return l, err
}

// LearnerByToken implements workshop.Store.
func (s *Store) LearnerByToken(ctx context.Context, token workshop.Token) (workshop.Learner, error) {
	l, err := scanLearner(s.pool.QueryRow(ctx, `SELECT `+learnerColumns+` FROM learners WHERE token = $1 AND removed_at IS NULL`, string(token)))
	return l, unavailable(err)
}

// Learners implements workshop.Store.
func (s *Store) Learners(ctx context.Context, roomID int64) ([]workshop.Learner, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+learnerColumns+` FROM learners WHERE room_id = $1 AND removed_at IS NULL ORDER BY id`, roomID)
	ls, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (workshop.Learner, error) { return scanLearner(row) })
	return ls, unavailable(err)
}

const eventColumns = `id, room_id, learner_id, kind, lesson, exercise, item, passed, detail, playground, number, at, source`

func scanEvent(row pgx.Row, prefix ...any) (workshop.Event, error) {
	var e workshop.Event
	var kind, source string
	var at time.Time
	dest := append(prefix, &e.ID, &e.RoomID, &e.LearnerID, &kind, &e.Lesson, &e.Exercise, &e.Item, &e.Passed, &e.Detail, &e.Playground, &e.Number, &at, &source)
	if err := row.Scan(dest...); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return e, workshop.ErrNotFound
		}
		return e, err
	}
	e.Kind = workshop.Kind(kind)
	e.Source = workshop.Source(source)
	e.At = at.UTC()
	return e, nil
}

// insertEvent records e under key unless the key is taken, in which case
// it returns ErrNotFound; a recorded event is announced with NOTIFY, sent
// when (and only if) the transaction commits. The caller holds lockRoom.
func insertEvent(ctx context.Context, tx pgx.Tx, key string, e workshop.Event) (workshop.Event, error) {
	fp := e.Fingerprint()
	stored, err := scanEvent(tx.QueryRow(ctx, `INSERT INTO events
			(room_id, learner_id, idem_key, fingerprint, kind, push, lesson, exercise, item, passed, detail, playground, number, at, source)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
		ON CONFLICT (room_id, learner_id, idem_key) DO NOTHING
		RETURNING `+eventColumns,
		e.RoomID, e.LearnerID, key, fp[:], string(e.Kind), e.Kind.Push(), e.Lesson, e.Exercise, e.Item, e.Passed, e.Detail, e.Playground, e.Number, ms(e.At), string(e.Reporter())))
	if err != nil {
		return stored, err
	}
	what := event
	if e.Kind.Push() {
		what = push
	}
	return stored, notify(ctx, tx, e.RoomID, stored.ID, what)
}

// Append implements workshop.Store.
func (s *Store) Append(ctx context.Context, key workshop.Key, e workshop.Event) (workshop.Event, bool, error) {
	var stored workshop.Event
	var replayed bool
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		ended, err := lockRoom(ctx, tx, e.RoomID)
		if err != nil {
			return err
		}
		if ended == nil {
			stored, err = insertEvent(ctx, tx, string(key), e)
			if !errors.Is(err, workshop.ErrNotFound) {
				return err
			}
		}
		var fp []byte
		stored, err = scanEvent(tx.QueryRow(ctx, `SELECT fingerprint, `+eventColumns+` FROM events
			WHERE room_id = $1 AND learner_id = $2 AND idem_key = $3`, e.RoomID, e.LearnerID, string(key)), &fp)
		switch {
		case errors.Is(err, workshop.ErrNotFound) && ended != nil:
			return workshop.ErrRoomEnded
		case err != nil:
			return err
		}
		if want := e.Fingerprint(); string(fp) != string(want[:]) {
			return workshop.ErrKeyReused
		}
		replayed = true
		return nil
	})
	if err != nil {
		return workshop.Event{}, false, err
	}
	return stored, replayed, nil
}

// Events implements workshop.Store.
func (s *Store) Events(ctx context.Context, roomID, after int64, pushesOnly bool, limit int) ([]workshop.Event, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("pgstore: Events: limit %d", limit)
	}
	q := `SELECT ` + eventColumns + ` FROM events WHERE room_id = $1 AND id > $2 ORDER BY id LIMIT $3`
	if pushesOnly {
		q = `SELECT ` + eventColumns + ` FROM events WHERE room_id = $1 AND push AND id > $2 ORDER BY id LIMIT $3`
	}
	rows, _ := s.pool.Query(ctx, q, roomID, after, limit)
	evs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (workshop.Event, error) { return scanEvent(row) })
	return evs, unavailable(err)
}

// RenameLearner implements workshop.Store.
func (s *Store) RenameLearner(ctx context.Context, roomID, learnerID int64, name string, at time.Time) (workshop.Learner, error) {
	var l workshop.Learner
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockRoom(ctx, tx, roomID); err != nil {
			return err
		}
		old, err := scanLearner(tx.QueryRow(ctx, `SELECT `+learnerColumns+` FROM learners
			WHERE id = $1 AND room_id = $2 AND removed_at IS NULL FOR UPDATE`, learnerID, roomID))
		if err != nil || old.Name == name {
			l = old
			return err
		}
		l, err = scanLearner(tx.QueryRow(ctx, `UPDATE learners SET name = $1 WHERE id = $2 RETURNING `+learnerColumns, name, learnerID))
		if err != nil {
			return err
		}
		_, err = insertEvent(ctx, tx, workshop.RenamedKey(at), workshop.Event{RoomID: roomID, LearnerID: learnerID,
			Kind: workshop.KindRenamed, Item: name, Detail: old.Name, At: at, Source: workshop.SourceServer})
		return err
	})
	return l, err
}

// RemoveLearner implements workshop.Store.
func (s *Store) RemoveLearner(ctx context.Context, roomID, learnerID int64, at time.Time) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := lockRoom(ctx, tx, roomID); err != nil {
			if errors.Is(err, workshop.ErrNotFound) {
				return nil
			}
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE learners SET removed_at = $1 WHERE id = $2 AND room_id = $3 AND removed_at IS NULL`,
			ms(at), learnerID, roomID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 1 {
			_, err = insertEvent(ctx, tx, workshop.RemovedKey, workshop.Event{RoomID: roomID, LearnerID: learnerID,
				Kind: workshop.KindRemoved, At: at, Source: workshop.SourceServer})
		}
		return err
	})
}
