package web

import "testing"

func TestPgFailure_NamesPostgreSQLsCondition(t *testing.T) {
	for _, c := range []struct{ msg, want string }{
		{`ERROR: duplicate key value violates unique constraint "processed_messages_pkey" (SQLSTATE 23505)`, "fails with 23505 (unique_violation)"},
		{"ERROR: could not serialize access due to concurrent update (SQLSTATE 40001)", "fails with 40001 (serialization_failure)"},
		{"ERROR: something new (SQLSTATE XX000)", "fails with XX000"},
		{"UNIQUE constraint failed: processed_messages.message_id (2067)", ""},
		{"database is locked (5) (SQLITE_BUSY)", ""},
		{"(SQLSTATE 4000", ""},
		{"", ""},
	} {
		if got := pgFailure(c.msg); got != c.want {
			t.Errorf("pgFailure(%q) = %q, want %q", c.msg, got, c.want)
		}
	}
}
