package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"idemlab/workshop"
)

var _ workshop.KeySource = (*Store)(nil)

const instructorKeySetting = "instructor_key"

// InstructorKey implements workshop.KeySource: an INSERT … ON CONFLICT DO
// NOTHING, then the row, so that replicas starting together agree on one key.
func (s *Store) InstructorKey(ctx context.Context, fresh string, create bool) (string, error) {
	var key string
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if create {
			if _, err := tx.Exec(ctx, `INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
				instructorKeySetting, fresh); err != nil {
				return err
			}
		}
		err := tx.QueryRow(ctx, `SELECT value FROM settings WHERE name = $1`, instructorKeySetting).Scan(&key)
		if errors.Is(err, pgx.ErrNoRows) {
			return workshop.ErrNotFound
		}
		return err
	})
	return key, err
}

// SetInstructorKey implements workshop.KeySource.
func (s *Store) SetInstructorKey(ctx context.Context, key string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`,
		instructorKeySetting, key)
	return unavailable(err)
}
