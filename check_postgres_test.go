package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"idemlab/internal/pgtest"
)

// idemlab check -ledger postgres-rc checks on PostgreSQL: a check inside
// the transaction, which holds on SQLite, fails there with 23505 and an
// unacked message; the replay link names the ledger; exit 1.
func TestCheck_PostgresLedger(t *testing.T) {
	url := pgtest.Database(t)
	file := writeHandler(t, "@on credit\nBEGIN;\nSELECT 1 FROM processed_messages WHERE message_id = :message_id;\n@stop-if-found\n"+
		"INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\n"+
		"UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"check", "-ledger", "postgres-rc", "-ledger-database", url, "race-check-then-insert", file}, &stdout, &stderr)
	if code := exitStatus(err); code != 1 {
		t.Fatalf("exit %d (%v), want 1\n%s%s", code, err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"SQLSTATE 23505", "acked-not-retried", "ledger=postgres-rc", file + ":5:"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}

func TestCheck_PostgresLedgerBadFlags(t *testing.T) {
	file := writeHandler(t, "@on credit\nSELECT 1;\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "-ledger", "postgres-rc", "race-check-then-insert", file}, "check: -ledger postgres-rc needs -ledger-database"},
		{[]string{"check", "-ledger", "oracle", "race-check-then-insert", file}, `unknown ledger "oracle"`},
	} {
		wantUsageError(t, tc.args, tc.want)
	}
}
