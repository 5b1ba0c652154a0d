package playview

// PostgreSQL's words for a failed statement: its SQLSTATE (which the
// engine keeps typed, Step.SQLState) and the condition name PostgreSQL's
// error-code appendix gives it, so that a step reads "fails with 23505
// (unique_violation)" without the SQL panel open. SQLite's errors carry
// no SQLSTATE and are left as they are.

// postgresConditions names the SQLSTATEs a ledger's statements can end with.
var postgresConditions = map[string]string{
	"23505": "unique_violation",
	"23502": "not_null_violation",
	"25P02": "in_failed_sql_transaction",
	"40001": "serialization_failure",
	"40P01": "deadlock_detected",
	"42501": "insufficient_privilege",
	"55P03": "lock_not_available",
	"57014": "query_canceled",
}

// postgresFailure is a step's result for a PostgreSQL error, by its
// SQLSTATE (playground.Step.SQLState): "fails with 23505
// (unique_violation)"; "" for none.
func postgresFailure(code string) string {
	if code == "" {
		return ""
	}
	if name := postgresConditions[code]; name != "" {
		return "fails with " + code + " (" + name + ")"
	}
	return "fails with " + code
}
