package workshop

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
)

// Migration is one forward-only schema change: migrations/NNNN_name.sql,
// applied in version order, each once, never edited after release.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

var migrationName = regexp.MustCompile(`^([0-9]{4})_([a-z0-9_]+)\.sql$`)

// LoadMigrations reads the *.sql files of dir in fsys. Versions start at 1
// and have no gaps, so that a missing file is noticed.
func LoadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("workshop: migration %s: want NNNN_name.sql", e.Name())
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		v, _ := strconv.Atoi(m[1])
		ms = append(ms, Migration{Version: v, Name: m[2], SQL: string(data)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("workshop: migrations must be numbered 1, 2, 3…; found %04d where %04d belongs", m.Version, i+1)
		}
	}
	return ms, nil
}

// AppliedMigration is a row of a store's schema_migrations table.
type AppliedMigration struct {
	Version int
	Name    string
}

// PendingMigrations checks what a database has applied against what this
// build knows and returns what is left to apply. A database with a version
// this build does not know was written by a newer Idemlab; one whose applied
// names differ was changed behind our back: both are refused, since
// migrations only go forward.
func PendingMigrations(applied []AppliedMigration, known []Migration) ([]Migration, error) {
	sort.Slice(applied, func(i, j int) bool { return applied[i].Version < applied[j].Version })
	for i, a := range applied {
		if a.Version > len(known) {
			return nil, fmt.Errorf("workshop: the database has schema version %d, this Idemlab knows up to %d: it was written by a newer Idemlab; upgrade, or restore a backup", a.Version, len(known))
		}
		if a.Version != i+1 {
			return nil, fmt.Errorf("workshop: the database's schema_migrations skips from %d to %d; it was not made by Idemlab's migrations", i, a.Version)
		}
		if k := known[a.Version-1]; k.Name != a.Name {
			return nil, fmt.Errorf("workshop: the database applied migration %04d as %q, this Idemlab calls it %q; migrations never change once released", a.Version, a.Name, k.Name)
		}
	}
	return known[len(applied):], nil
}
