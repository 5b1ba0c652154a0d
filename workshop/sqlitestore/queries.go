package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"idemlab/workshop"
)

const roomColumns = `id, code, name, lessons, exercises, created_at, ended_at`

func scanRoom(row interface{ Scan(...any) error }) (workshop.Room, error) {
	var r workshop.Room
	var code, lessons, exercises string
	var created int64
	var ended sql.NullInt64
	if err := row.Scan(&r.ID, &code, &r.Name, &lessons, &exercises, &created, &ended); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return r, workshop.ErrNotFound
		}
		return r, err
	}
	r.Code = workshop.Code(code)
	r.Lessons, r.Exercises = splitLines(lessons), splitLines(exercises)
	r.CreatedAt = time.UnixMilli(created).UTC()
	if ended.Valid {
		r.EndedAt = time.UnixMilli(ended.Int64).UTC()
	}
	return r, nil
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// CreateRoom implements workshop.Store.
func (s *Store) CreateRoom(ctx context.Context, key workshop.Key, spec workshop.RoomSpec, code workshop.Code, at time.Time) (workshop.Room, error) {
	w, _, err := s.dbs(ctx, true)
	if err != nil {
		return workshop.Room{}, err
	}
	var room workshop.Room
	err = inTx(ctx, w, func(tx *sql.Tx) error {
		row := tx.QueryRowContext(ctx, `INSERT INTO rooms (code, create_key, name, lessons, exercises, created_at)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (create_key) DO NOTHING
			RETURNING `+roomColumns,
			string(code), string(key), spec.Name, strings.Join(spec.Lessons, "\n"), strings.Join(spec.Exercises, "\n"), at.UnixMilli())
		room, err = scanRoom(row)
		if errors.Is(err, workshop.ErrNotFound) { // the key was used before
			room, err = scanRoom(tx.QueryRowContext(ctx, `SELECT `+roomColumns+` FROM rooms WHERE create_key = ?`, string(key)))
			if errors.Is(err, workshop.ErrNotFound) {
				return workshop.ErrNotFound // created and deleted since
			}
			if err == nil && (room.Name != spec.Name || !slices.Equal(room.Lessons, spec.Lessons) || !slices.Equal(room.Exercises, spec.Exercises)) {
				return workshop.ErrKeyReused
			}
			return err
		}
		if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed: rooms.code") {
			return workshop.ErrCodeTaken
		}
		return err
	})
	return room, err
}

// Room implements workshop.Store.
func (s *Store) Room(ctx context.Context, id int64) (workshop.Room, error) {
	return s.roomWhere(ctx, `id = ?`, id)
}

// RoomByCode implements workshop.Store.
func (s *Store) RoomByCode(ctx context.Context, code workshop.Code) (workshop.Room, error) {
	return s.roomWhere(ctx, `code = ?`, string(code))
}

func (s *Store) roomWhere(ctx context.Context, where string, arg any) (workshop.Room, error) {
	_, r, err := s.dbs(ctx, false)
	if err != nil {
		return workshop.Room{}, err
	}
	if r == nil {
		return workshop.Room{}, workshop.ErrNotFound
	}
	return scanRoom(r.QueryRowContext(ctx, `SELECT `+roomColumns+` FROM rooms WHERE `+where, arg))
}

// Rooms implements workshop.Store.
func (s *Store) Rooms(ctx context.Context) ([]workshop.Room, error) {
	_, r, err := s.dbs(ctx, false)
	if err != nil || r == nil {
		return nil, err
	}
	rows, err := r.QueryContext(ctx, `SELECT `+roomColumns+` FROM rooms ORDER BY id DESC`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var rooms []workshop.Room
	for rows.Next() {
		room, err := scanRoom(rows)
		if err != nil {
			return nil, err
		}
		rooms = append(rooms, room)
	}
	return rooms, rows.Err()
}

// Idempotency keys of the events the store records itself. Clients' keys
// have at least 8 characters, so they never collide with these.
const (
	roomEndedKey = "ended"
	joinedKey    = "joined"
)

// EndRoom implements workshop.Store.
func (s *Store) EndRoom(ctx context.Context, id int64, at time.Time) (workshop.Room, error) {
	w, _, err := s.dbs(ctx, false)
	if err != nil {
		return workshop.Room{}, err
	}
	if w == nil {
		return workshop.Room{}, workshop.ErrNotFound
	}
	var room workshop.Room
	err = inTx(ctx, w, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE rooms SET ended_at = ? WHERE id = ? AND ended_at IS NULL`, at.UnixMilli(), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			ev := workshop.Event{RoomID: id, Kind: workshop.KindRoomEnded, At: at, Source: workshop.SourceServer}
			if _, err := insertEvent(ctx, tx, roomEndedKey, ev); err != nil {
				return err
			}
		}
		room, err = scanRoom(tx.QueryRowContext(ctx, `SELECT `+roomColumns+` FROM rooms WHERE id = ?`, id))
		return err
	})
	return room, err
}

// DeleteRoom implements workshop.Store.
func (s *Store) DeleteRoom(ctx context.Context, id int64) error {
	w, _, err := s.dbs(ctx, false)
	if err != nil || w == nil {
		return err
	}
	_, err = w.ExecContext(ctx, `DELETE FROM rooms WHERE id = ?`, id)
	return err
}

// DeleteRoomsCreatedBefore implements workshop.Store.
func (s *Store) DeleteRoomsCreatedBefore(ctx context.Context, t time.Time) (int, error) {
	w, _, err := s.dbs(ctx, false)
	if err != nil || w == nil {
		return 0, err
	}
	res, err := w.ExecContext(ctx, `DELETE FROM rooms WHERE created_at < ?`, t.UnixMilli())
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

const learnerColumns = `id, room_id, name, token, joined_at`

func scanLearner(row interface{ Scan(...any) error }) (workshop.Learner, error) {
	var l workshop.Learner
	var token string
	var joined int64
	if err := row.Scan(&l.ID, &l.RoomID, &l.Name, &token, &joined); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return l, workshop.ErrNotFound
		}
		return l, err
	}
	l.Token = workshop.Token(token)
	l.JoinedAt = time.UnixMilli(joined).UTC()
	return l, nil
}

// Join implements workshop.Store.
func (s *Store) Join(ctx context.Context, roomID int64, key workshop.Key, name string, token workshop.Token, at time.Time) (workshop.Learner, error) {
	w, _, err := s.dbs(ctx, false)
	if err != nil {
		return workshop.Learner{}, err
	}
	if w == nil {
		return workshop.Learner{}, workshop.ErrNotFound
	}
	var l workshop.Learner
	err = inTx(ctx, w, func(tx *sql.Tx) error {
		var ended sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT ended_at FROM rooms WHERE id = ?`, roomID).Scan(&ended); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return workshop.ErrNotFound
			}
			return err
		}
		l, err = scanLearner(tx.QueryRowContext(ctx, `INSERT INTO learners (room_id, join_key, name, token, joined_at)
			SELECT ?, ?, ?, ?, ? WHERE ? -- WHERE: SQLite's way to tell an upsert's ON from a join's
			ON CONFLICT (room_id, join_key) DO NOTHING
			RETURNING `+learnerColumns, roomID, string(key), name, string(token), at.UnixMilli(), !ended.Valid))
		if err == nil {
			_, err = insertEvent(ctx, tx, joinedKey, workshop.Event{RoomID: roomID, LearnerID: l.ID, Kind: workshop.KindJoined, At: at, Source: workshop.SourceServer})
			return err
		}
		if !errors.Is(err, workshop.ErrNotFound) {
			return err
		}
		l, err = scanLearner(tx.QueryRowContext(ctx, `SELECT `+learnerColumns+` FROM learners WHERE room_id = ? AND join_key = ?`, roomID, string(key)))
		switch {
		case errors.Is(err, workshop.ErrNotFound) && ended.Valid:
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
	_, r, err := s.dbs(ctx, false)
	if err != nil {
		return workshop.Learner{}, err
	}
	if r == nil {
		return workshop.Learner{}, workshop.ErrNotFound
	}
	return scanLearner(r.QueryRowContext(ctx, `SELECT `+learnerColumns+` FROM learners WHERE token = ? AND removed_at IS NULL`, string(token)))
}

// Learners implements workshop.Store.
func (s *Store) Learners(ctx context.Context, roomID int64) ([]workshop.Learner, error) {
	_, r, err := s.dbs(ctx, false)
	if err != nil || r == nil {
		return nil, err
	}
	rows, err := r.QueryContext(ctx, `SELECT `+learnerColumns+` FROM learners WHERE room_id = ? AND removed_at IS NULL ORDER BY id`, roomID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ls []workshop.Learner
	for rows.Next() {
		l, err := scanLearner(rows)
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
	}
	return ls, rows.Err()
}

const eventColumns = `id, room_id, learner_id, kind, lesson, exercise, item, passed, detail, playground, number, at, source`

func scanEvent(row interface{ Scan(...any) error }) (workshop.Event, error) {
	var e workshop.Event
	var kind, source string
	var at int64
	if err := row.Scan(&e.ID, &e.RoomID, &e.LearnerID, &kind, &e.Lesson, &e.Exercise, &e.Item, &e.Passed, &e.Detail, &e.Playground, &e.Number, &at, &source); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return e, workshop.ErrNotFound
		}
		return e, err
	}
	e.Kind = workshop.Kind(kind)
	e.Source = workshop.Source(source)
	e.At = time.UnixMilli(at).UTC()
	return e, nil
}

// insertEvent records e under key unless the key is taken, in which case
// it returns ErrNotFound. The key and the event are one row: one statement,
// one unique constraint, nothing to check first.
func insertEvent(ctx context.Context, tx *sql.Tx, key string, e workshop.Event) (workshop.Event, error) {
	fp := e.Fingerprint()
	return scanEvent(tx.QueryRowContext(ctx, `INSERT INTO events
			(room_id, learner_id, idem_key, fingerprint, kind, push, lesson, exercise, item, passed, detail, playground, number, at, source)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (room_id, learner_id, idem_key) DO NOTHING
		RETURNING `+eventColumns,
		e.RoomID, e.LearnerID, key, fp[:], string(e.Kind), e.Kind.Push(), e.Lesson, e.Exercise, e.Item, e.Passed, e.Detail, e.Playground, e.Number, e.At.UnixMilli(), string(e.Reporter())))
}

// Append implements workshop.Store.
func (s *Store) Append(ctx context.Context, key workshop.Key, e workshop.Event) (workshop.Event, bool, error) {
	w, _, err := s.dbs(ctx, false)
	if err != nil {
		return workshop.Event{}, false, err
	}
	if w == nil {
		return workshop.Event{}, false, workshop.ErrNotFound
	}
	var stored workshop.Event
	var replayed bool
	err = inTx(ctx, w, func(tx *sql.Tx) error {
		var ended sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT ended_at FROM rooms WHERE id = ?`, e.RoomID).Scan(&ended); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return workshop.ErrNotFound
			}
			return err
		}
		if !ended.Valid {
			stored, err = insertEvent(ctx, tx, string(key), e)
			if !errors.Is(err, workshop.ErrNotFound) {
				return err
			}
		}
		var fp []byte
		row := tx.QueryRowContext(ctx, `SELECT fingerprint, `+eventColumns+` FROM events
			WHERE room_id = ? AND learner_id = ? AND idem_key = ?`, e.RoomID, e.LearnerID, string(key))
		stored, err = scanEvent(scannerWithPrefix{row, &fp})
		switch {
		case errors.Is(err, workshop.ErrNotFound) && ended.Valid:
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

// scannerWithPrefix scans a first column into prefix, the rest as usual.
type scannerWithPrefix struct {
	row    *sql.Row
	prefix *[]byte
}

func (s scannerWithPrefix) Scan(dest ...any) error {
	return s.row.Scan(append([]any{s.prefix}, dest...)...)
}

// Events implements workshop.Store.
func (s *Store) Events(ctx context.Context, roomID, after int64, pushesOnly bool, limit int) ([]workshop.Event, error) {
	_, r, err := s.dbs(ctx, false)
	if err != nil || r == nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, fmt.Errorf("sqlitestore: Events: limit %d", limit)
	}
	q := `SELECT ` + eventColumns + ` FROM events WHERE room_id = ? AND id > ? ORDER BY id LIMIT ?`
	if pushesOnly {
		q = `SELECT ` + eventColumns + ` FROM events WHERE room_id = ? AND push = 1 AND id > ? ORDER BY id LIMIT ?`
	}
	rows, err := r.QueryContext(ctx, q, roomID, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var evs []workshop.Event
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, err
		}
		evs = append(evs, e)
	}
	return evs, rows.Err()
}

// RenameLearner implements workshop.Store.
func (s *Store) RenameLearner(ctx context.Context, roomID, learnerID int64, name string, at time.Time) (workshop.Learner, error) {
	w, _, err := s.dbs(ctx, false)
	if err != nil {
		return workshop.Learner{}, err
	}
	if w == nil {
		return workshop.Learner{}, workshop.ErrNotFound
	}
	var l workshop.Learner
	err = inTx(ctx, w, func(tx *sql.Tx) error {
		old, err := scanLearner(tx.QueryRowContext(ctx, `SELECT `+learnerColumns+` FROM learners
			WHERE id = ? AND room_id = ? AND removed_at IS NULL`, learnerID, roomID))
		if err != nil || old.Name == name {
			l = old
			return err
		}
		l, err = scanLearner(tx.QueryRowContext(ctx, `UPDATE learners SET name = ? WHERE id = ? RETURNING `+learnerColumns, name, learnerID))
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
	w, _, err := s.dbs(ctx, false)
	if err != nil || w == nil {
		return err
	}
	return inTx(ctx, w, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE learners SET removed_at = ? WHERE id = ? AND room_id = ? AND removed_at IS NULL`,
			at.UnixMilli(), learnerID, roomID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			_, err = insertEvent(ctx, tx, workshop.RemovedKey, workshop.Event{RoomID: roomID, LearnerID: learnerID,
				Kind: workshop.KindRemoved, At: at, Source: workshop.SourceServer})
		}
		return err
	})
}
