package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"idemlab/internal/pgtest"
)

// idemlab check -ledger postgres-rc checks on PostgreSQL. A check inside
// the transaction holds there as on SQLite: the racing copy meets 23505,
// is not acked, and its redelivery finds the id (issue 24: a failure the
// next delivery heals is not a poison message). A check outside any
// transaction fails, and the replay link names the ledger; exit 1.
func TestCheck_PostgresLedger(t *testing.T) {
	url := pgtest.LedgerDatabase(t)
	for _, tc := range []struct {
		name, handler string
		code          int
		want          []string
	}{
		{"check-inside-the-transaction", "@on credit\nBEGIN;\nSELECT 1 FROM processed_messages WHERE message_id = :message_id;\n@stop-if-found\n" +
			"INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\n" +
			"UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n",
			0, []string{"holds on postgres-rc"}},
		{"check-outside-any-transaction", "@on credit\nSELECT 1 FROM processed_messages WHERE message_id = :message_id;\n@stop-if-found\n" +
			"UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\n" +
			"INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\n",
			1, []string{"credited 2 times", "ledger=postgres-rc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeHandler(t, tc.handler)
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"check", "-ledger", "postgres-rc", "-ledger-database", url, "race-check-then-insert", file}, &stdout, &stderr)
			code := 0
			if err != nil {
				code = exitStatus(err)
			}
			if code != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s%s", code, err, tc.code, stdout.String(), stderr.String())
			}
			out := stdout.String()
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("the report lacks %q:\n%s", want, out)
				}
			}
		})
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
