package playground

import (
	"strings"
	"testing"
)

// A learner's handler for SQLite that uses PostgreSQL's syntax is refused
// at parse time with the line and what SQLite offers instead, not with
// SQLite's bare "syntax error"; the same words inside a string or a
// comment, or as part of a longer name, are no mistake.
func TestParseHandler_PostgresSyntaxOnSQLiteGetsAHint(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{"SELECT 1 FROM processed_messages WHERE message_id = :message_id FOR UPDATE;", "FOR UPDATE is PostgreSQL's; SQLite has no row locks: BEGIN IMMEDIATE"},
		{"SELECT 1 FROM processed_messages WHERE message_id = :message_id FOR UPDATE SKIP LOCKED;", "FOR UPDATE is PostgreSQL's"},
		{"SELECT 1 FROM orders WHERE id = :order_id for no key update;", "FOR NO KEY UPDATE is PostgreSQL's"},
		{"SELECT 1 FROM orders WHERE id = :order_id FOR SHARE;", "FOR SHARE is PostgreSQL's"},
		{"SELECT pg_advisory_xact_lock(hashtext(:message_id));", "pg_advisory_xact_lock is PostgreSQL's; SQLite has no advisory locks"},
		{"SELECT 1 FROM orders WHERE state ILIKE 'paid';", "SQLite's LIKE already ignores the case"},
		{"BEGIN ISOLATION LEVEL SERIALIZABLE;\nCOMMIT;", "SQLite has no isolation level to choose"},
		{"BEGIN WORK;\nCOMMIT;", "BEGIN WORK is PostgreSQL's"},
		{"BEGIN READ ONLY;\nCOMMIT;", `near "READ": syntax error`},
	} {
		_, err := ParseHandler("mine", "-- a comment\n"+tc.sql)
		in, ok := err.(*InputError)
		if !ok || !strings.Contains(in.Msg, tc.want) || in.Line != 2 || !strings.Contains(in.Msg, "line 2") {
			t.Errorf("%s: %v; want an error on line 2 saying %q", tc.sql, err, tc.want)
		}
	}
	for _, ok := range []string{
		"SELECT 1 FROM orders WHERE state = 'for update';",
		"-- FOR UPDATE would lock the row on PostgreSQL\nSELECT 1 FROM orders WHERE id = :order_id;",
		"BEGIN IMMEDIATE;\nSELECT 1 FROM processed_messages WHERE message_id = :message_id;\nCOMMIT;",
		"BEGIN TRANSACTION;\nSELECT 1 FROM processed_messages WHERE message_id = :message_id;\nEND TRANSACTION;",
	} {
		if _, err := ParseHandler("mine", ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	// A statement SQLite rejects for another reason keeps SQLite's message.
	_, err := ParseHandler("mine", "SELECT 1 FROM nowhere;")
	if err == nil || !strings.Contains(err.Error(), "no such table: nowhere") {
		t.Errorf("unknown table: %v; want SQLite's own message", err)
	}
}
