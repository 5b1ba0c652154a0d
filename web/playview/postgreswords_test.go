package playview

import (
	"testing"
)

func TestPostgresFailure_NamesPostgreSQLsCondition(t *testing.T) {
	for _, c := range []struct{ code, want string }{
		{"23505", "fails with 23505 (unique_violation)"},
		{"40001", "fails with 40001 (serialization_failure)"},
		{"XX000", "fails with XX000"},
		{"", ""}, // SQLite's errors have no SQLSTATE
	} {
		if got := postgresFailure(c.code); got != c.want {
			t.Errorf("postgresFailure(%q) = %q, want %q", c.code, got, c.want)
		}
	}
}
