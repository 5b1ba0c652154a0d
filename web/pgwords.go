package web

import "strings"

// PostgreSQL's words for a failed statement: the SQLSTATE its error ends
// with and the condition name PostgreSQL's error-code appendix gives it,
// so that a step reads "fails with 23505 (unique_violation)" without the
// SQL panel open. SQLite's errors carry no SQLSTATE and are left as they
// are.

// pgConditions names the SQLSTATEs a ledger's statements can end with.
var pgConditions = map[string]string{
	"23505": "unique_violation",
	"23502": "not_null_violation",
	"25P02": "in_failed_sql_transaction",
	"40001": "serialization_failure",
	"40P01": "deadlock_detected",
	"42501": "insufficient_privilege",
	"55P03": "lock_not_available",
	"57014": "query_canceled",
}

// pgSQLState is the SQLSTATE of a PostgreSQL error message ("… (SQLSTATE
// 23505)"), or "".
func pgSQLState(msg string) string {
	_, rest, ok := strings.Cut(msg, "(SQLSTATE ")
	if !ok {
		return ""
	}
	code, _, ok := strings.Cut(rest, ")")
	if !ok || len(code) != 5 {
		return ""
	}
	return code
}

// pgFailure is a step's result for a PostgreSQL error: "fails with 23505
// (unique_violation)"; "" for anything else.
func pgFailure(msg string) string {
	code := pgSQLState(msg)
	if code == "" {
		return ""
	}
	if name := pgConditions[code]; name != "" {
		return "fails with " + code + " (" + name + ")"
	}
	return "fails with " + code
}
