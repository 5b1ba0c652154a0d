package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"idemlab/internal/pgtest"
)

// idemlab run on a PostgreSQL ledger prints the same verdict table as on
// SQLite, byte for byte the same on a second run, and leaves no schema or
// role behind.
func TestRun_PostgresLedgerSameTableTwice(t *testing.T) {
	url := pgtest.LedgerDatabase(t)
	script := "start msg-1 on A; start msg-1 on B; step A; step B; step A; step B; finish A; finish B"
	for _, ledger := range []string{"postgres-rc", "postgres-rr", "postgres-serializable"} {
		var first string
		for i := 0; i < 2; i++ {
			for _, asJSON := range []bool{false, true} {
				args := []string{"run", "concurrent-duplicate", "-script", script, "-ledger", ledger, "-ledger-database", url}
				if asJSON {
					args = append(args, "-json")
				}
				var stdout, stderr bytes.Buffer
				if err := run(context.Background(), args, &stdout, &stderr); err != nil {
					t.Fatalf("%s: %v\n%s", ledger, err, stderr.String())
				}
				out := stdout.String()
				if asJSON {
					if !strings.Contains(out, `"ledger": "`+ledger+`"`) {
						t.Errorf("%s: the JSON trace does not name its ledger", ledger)
					}
					continue
				}
				for _, want := range []string{"check-then-insert  acc-1=130  acc-1=160  duplicate-effect", "dedupe-tx          acc-1=130  acc-1=130  ok"} {
					if !strings.Contains(out, want) {
						t.Errorf("%s: the table lacks %q:\n%s", ledger, want, out)
					}
				}
				if i == 0 {
					first = out
				} else if out != first {
					t.Errorf("%s: a second run printed\n%s\nthe first\n%s", ledger, out, first)
				}
			}
		}
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_roles WHERE rolname LIKE 'idemlab_run_%'").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d ledger roles left behind (%v)", n, err)
	}
}

func TestRun_PostgresLedgerBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "lost-ack", "-ledger", "postgres-rc"}, "needs -ledger-database"},
		{[]string{"run", "lost-ack", "-ledger-database", "postgres://x"}, "for the postgres-* ledgers"},
		{[]string{"run", "lost-ack", "-ledger", "oracle"}, `unknown ledger "oracle"; ledgers are sqlite, postgres-rc, postgres-rr, postgres-serializable`},
	} {
		wantUsageError(t, tc.args, tc.want)
	}
}

// wantUsageError runs the command line args and wants a usage error (exit
// status 2) whose message or stderr contains want.
func wantUsageError(t *testing.T, args []string, want string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error()+stderr.String(), want) {
		t.Errorf("%q: %v %s; want %q", args, err, stderr.String(), want)
	}
	if code := exitStatus(err); code != 2 {
		t.Errorf("%q: exit %d, want 2", args, code)
	}
}
