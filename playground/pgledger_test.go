package playground

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"idemlab/internal/pgtest"
)

// The PostgreSQL behaviours of ../shared/reference/delivery-facts.md
// ("PostgreSQL 15.18, run here with two interleaved sessions"), each played
// through the engine on a real server: the test asserts every step of the
// trace (waits, errors, rows). They need IDEMLAB_TEST_DATABASE (see
// internal/pgtest), and CI requires them.

// testPostgresLedgers opens a pool of ledgers of the test's own on the
// test cluster; it is dropped when the test ends.
func testPostgresLedgers(t testing.TB, size int) *PostgresLedgers {
	t.Helper()
	url := pgtest.LedgerDatabase(t)
	var b [4]byte
	rand.Read(b[:])
	pg, err := OpenPostgresLedgers(context.Background(), url, size, "test_ledger_"+hex.EncodeToString(b[:]))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pg.Close(); err != nil {
			t.Error(err)
		}
	})
	return pg
}

// runOnPostgres plays a script on a PostgreSQL ledger with built-in
// handlers or one handler given by its source.
func runOnPostgres(t *testing.T, pg *PostgresLedgers, ledger, scenario, handler, source, script string) *Trace {
	t.Helper()
	lg, err := ParseLedger(ledger, pg)
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Scenario: scenario, Script: script, Ledger: lg}
	if source != "" {
		h, err := ParseHandlerFor(handler, source, lg)
		if err != nil {
			t.Fatal(err)
		}
		req.Custom = []*Handler{h}
	} else {
		req.Handlers = []string{handler}
	}
	tr, err := Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

var waitsOn = regexp.MustCompile(`waits on (\S+)'s transaction`)

// stepLines writes a handler's steps one a line: worker, kind, the SQL's
// first word, rows, the SQLSTATE of an error, whom a waiting statement
// waits on.
func stepLines(h *HandlerTrace) []string {
	var out []string
	for _, st := range h.Steps {
		if st.Kind == StepNote && strings.Contains(st.Note, "cannot go on yet") {
			continue // the scheduler's switches: covered by the waits
		}
		line := st.Worker + " " + st.Kind
		if st.SQL != "" {
			line += " " + strings.Fields(st.SQL)[0]
		}
		if st.RowsAffected != nil {
			line += fmt.Sprintf(" rows=%d", *st.RowsAffected)
		}
		if st.RowsFound != nil {
			line += fmt.Sprintf(" found=%d", *st.RowsFound)
		}
		if st.Error != "" {
			line += " error=" + pgSQLStateOf(st.Error)
		}
		if m := waitsOn.FindStringSubmatch(st.Note); m != nil {
			line += " on=" + m[1]
		}
		if strings.HasPrefix(st.Note, "@retry-on") {
			line += " retry"
		}
		out = append(out, line)
	}
	return out
}

var sqlState = regexp.MustCompile(`\(SQLSTATE (\w+)\)`)

func pgSQLStateOf(msg string) string {
	if m := sqlState.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return msg
}

func assertSteps(t *testing.T, h *HandlerTrace, want string) {
	t.Helper()
	got := strings.Join(stepLines(h), "\n")
	want = strings.TrimSpace(strings.ReplaceAll(want, "\t", ""))
	if got != want {
		t.Errorf("steps of %s:\n%s\nwant:\n%s", h.Name, got, want)
	}
}

func balanceOf(h *HandlerTrace) string { return fmt.Sprint(h.Actual) }

// The race of two copies: A and B start msg-1, then go a statement each.
const raceScript = "start msg-1 on A; start msg-1 on B; step A; step B; step A; step B; finish A; finish B"

// Read committed, ON CONFLICT DO NOTHING against a concurrent uncommitted
// insert of the same key: B waits on A, then inserts 0 rows when A commits.
func TestPostgresLedger_OnConflictWaitsThenSkipsAtReadCommitted(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	tr := runOnPostgres(t, pg, "postgres-rc", "concurrent-duplicate", "dedupe-tx", "", raceScript)
	assertSteps(t, tr.Handlers[0], `
A deliver
B deliver
A sql BEGIN
B sql BEGIN
A sql INSERT rows=1
B blocked INSERT on=A
A sql UPDATE rows=1
A sql COMMIT
A ack
B sql INSERT rows=0
B stop ROLLBACK
B ack`)
	if tr.Handlers[0].Verdict != VerdictOK {
		t.Errorf("verdict %s, want ok", tr.Handlers[0].Verdict)
	}
}

// … and inserts its row when A's transaction rolls back (A's connection
// closes: a crash).
func TestPostgresLedger_OnConflictWaitsThenInsertsWhenTheOtherRollsBack(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	tr := runOnPostgres(t, pg, "postgres-rc", "concurrent-duplicate", "dedupe-tx", "",
		"start msg-1 on A; start msg-1 on B; step A; step B; step A; step B; crash A; finish B")
	assertSteps(t, tr.Handlers[0], `
A deliver
B deliver
A sql BEGIN
B sql BEGIN
A sql INSERT rows=1
B blocked INSERT on=A
A crash
A rollback ROLLBACK
B sql INSERT rows=1
B sql UPDATE rows=1
B sql COMMIT
B ack`)
}

// A plain INSERT of a key another open transaction inserted waits, then
// fails with 23505 when it commits; the failed transaction is rolled back
// whole (B's credit before it is undone), and the message is not acked.
func TestPostgresLedger_PlainInsertWaitsThenFailsWith23505(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	const src = `@on credit
BEGIN;
UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;
INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);
COMMIT;`
	tr := runOnPostgres(t, pg, "postgres-rc", "concurrent-duplicate", "plain-insert", src,
		"start msg-1 on A; step A 3; start msg-1 on B; step B 2; step A; finish B")
	h := tr.Handlers[0]
	assertSteps(t, h, `
A deliver
A sql BEGIN
A sql UPDATE rows=1
A sql INSERT rows=1
B deliver
B sql BEGIN
B blocked UPDATE on=A
A sql COMMIT
B sql UPDATE rows=1
B sql INSERT error=23505
B abort
B rollback ROLLBACK`)
	var reverted int
	for _, st := range h.Steps {
		reverted += len(st.Reverted)
	}
	if reverted != 1 || balanceOf(h) != "[acc-1=130]" {
		t.Errorf("B's credit is undone with its transaction: %d rows reverted, balances %s; want 1 and acc-1=130", reverted, balanceOf(h))
	}
}

// Against a row already committed, a plain INSERT fails at once (no wait).
func TestPostgresLedger_PlainInsertOfACommittedKeyFailsAtOnce(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	const src = `@on credit
INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);
UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;`
	tr := runOnPostgres(t, pg, "postgres-rc", "concurrent-duplicate", "plain-insert", src, "deliver msg-1; publish msg-1")
	assertSteps(t, tr.Handlers[0], `
A deliver
A sql INSERT rows=1
A sql UPDATE rows=1
A ack
A deliver
A sql INSERT error=23505
A abort`)
}

// A check-then-insert on a table with no unique key (shipments), in one
// transaction.
const noKeySource = `@on credit
BEGIN;
SELECT 1 FROM shipments WHERE message_id = :message_id%s;
@stop-if-found
INSERT INTO shipments(order_id, message_id, shipped_at) VALUES (:account_id, :message_id, :now);
COMMIT;`

// Read committed, no unique key: both checks see 0 rows, both insert, no
// error; SELECT … FOR UPDATE as the check changes nothing (no row to lock).
func TestPostgresLedger_CheckThenInsertWithoutAKeyInsertsTwiceAtReadCommitted(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	for _, forUpdate := range []string{"", " FOR UPDATE"} {
		tr := runOnPostgres(t, pg, "postgres-rc", "concurrent-duplicate", "no-key", fmt.Sprintf(noKeySource, forUpdate),
			"start msg-1 on A; start msg-1 on B; step A 2; step B 2; step A; step B; finish A; finish B")
		h := tr.Handlers[0]
		assertSteps(t, h, `
A deliver
B deliver
A sql BEGIN
A sql SELECT found=0
B sql BEGIN
B sql SELECT found=0
A sql INSERT rows=1
B sql INSERT rows=1
A sql COMMIT
A ack
B sql COMMIT
B ack`)
		if n := len(h.Ledger[2].Rows); n != 2 {
			t.Errorf("check%s: %d shipments rows, want 2", forUpdate, n)
		}
	}
}

// Serializable closes the same race: B's COMMIT fails with 40001 (read/write
// dependencies), and the message is not acked.
func TestPostgresLedger_SerializableFailsTheSecondCheckThenInsertAtCommit(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	tr := runOnPostgres(t, pg, "postgres-serializable", "concurrent-duplicate", "no-key", fmt.Sprintf(noKeySource, ""),
		"start msg-1 on A; start msg-1 on B; step A 2; step B 2; step A; step B; finish A; finish B")
	h := tr.Handlers[0]
	assertSteps(t, h, `
A deliver
B deliver
A sql BEGIN
A sql SELECT found=0
B sql BEGIN
B sql SELECT found=0
A sql INSERT rows=1
B sql INSERT rows=1
A sql COMMIT
A ack
B sql COMMIT error=40001
B abort`)
	if !strings.Contains(h.Steps[len(h.Steps)-2].Error, "read/write dependencies") {
		t.Errorf("B's COMMIT: %q, want PostgreSQL's read/write dependencies", h.Steps[len(h.Steps)-2].Error)
	}
	if n := len(h.Ledger[2].Rows); n != 1 {
		t.Errorf("%d shipments rows, want 1", n)
	}
}

// Repeatable read and serializable: the concurrent ON CONFLICT DO NOTHING
// waits, then raises 40001; @retry-on serialization_failure (the built-in
// handler's PostgreSQL variant) runs the transaction again, which inserts
// 0 rows and acks.
func TestPostgresLedger_OnConflictRaises40001ThenTheRetrySkipsAtRepeatableRead(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	for _, ledger := range []string{"postgres-rr", "postgres-serializable"} {
		tr := runOnPostgres(t, pg, ledger, "concurrent-duplicate", "dedupe-tx", "", raceScript)
		assertSteps(t, tr.Handlers[0], `
A deliver
B deliver
A sql BEGIN
B sql BEGIN
A sql INSERT rows=1
B blocked INSERT on=A
A sql UPDATE rows=1
A sql COMMIT
A ack
B sql INSERT error=40001
B rollback ROLLBACK
B note retry
B sql BEGIN
B sql INSERT rows=0
B stop ROLLBACK
B ack`)
		if tr.Handlers[0].Verdict != VerdictOK {
			t.Errorf("%s: verdict %s, want ok", ledger, tr.Handlers[0].Verdict)
		}
	}
}

// Without @retry-on, the 40001 fails the handler: the message is not acked.
func TestPostgresLedger_SerializationFailureWithoutRetryIsNotAcked(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	src := strings.Replace(mustRead(t, "handlers/postgres/dedupe-tx.handler"), "@retry-on serialization_failure\n", "", 1)
	tr := runOnPostgres(t, pg, "postgres-rr", "concurrent-duplicate", "no-retry", src, raceScript)
	lines := stepLines(tr.Handlers[0])
	if got := strings.Join(lines[len(lines)-3:], "\n"); got != "B sql INSERT error=40001\nB abort\nB rollback ROLLBACK" {
		t.Errorf("last steps:\n%s", got)
	}
}

// Conditional UPDATE … WHERE state = 'paid' in two transactions: B waits,
// then updates 0 rows after A commits and stops (the built-in conditional
// handler); 1 row if A rolls back.
func TestPostgresLedger_ConditionalUpdateWaitsThenMatchesNothing(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	tr := runOnPostgres(t, pg, "postgres-rc", "order-shipping", "conditional", "",
		"start ship-1 on A; start ship-1 on B; step A; step B; step A; step B; finish A; finish B")
	assertSteps(t, tr.Handlers[0], `
A deliver
B deliver
A sql BEGIN
B sql BEGIN
A sql UPDATE rows=1
B blocked UPDATE on=A
A sql INSERT rows=1
A sql COMMIT
A ack
B sql UPDATE rows=0
B stop ROLLBACK
B ack`)
	tr = runOnPostgres(t, pg, "postgres-rc", "order-shipping", "conditional", "",
		"start ship-1 on A; start ship-1 on B; step A; step B; step A; step B; crash A; finish B")
	assertSteps(t, tr.Handlers[0], `
A deliver
B deliver
A sql BEGIN
B sql BEGIN
A sql UPDATE rows=1
B blocked UPDATE on=A
A crash
A rollback ROLLBACK
B sql UPDATE rows=1
B sql INSERT rows=1
B sql COMMIT
B ack`)
}

// PostgreSQL counts matched rows: writing the value a row already has is
// UPDATE 1.
func TestPostgresLedger_RewritingTheSameValueCountsOneRow(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	tr := runOnPostgres(t, pg, "postgres-rc", "lost-ack", "set-value", "", "deliver msg-1; publish msg-1")
	assertSteps(t, tr.Handlers[0], `
A deliver
A sql UPDATE rows=1
A ack
A deliver
A sql UPDATE rows=1
A ack`)
}

// Two transactions that lock two rows in opposite orders: PostgreSQL's own
// deadlock detector aborts the one that closes the cycle (40P01), quickly
// (the roles' short deadlock_timeout), and the other goes on.
func TestPostgresLedger_DeadlockIsPostgreSQLs40P01(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	const src = `@on ship
BEGIN;
UPDATE orders SET shipped_at = :now WHERE id = :order_id;
UPDATE orders SET state = state WHERE id <> :order_id;
COMMIT;`
	tr := runOnPostgres(t, pg, "postgres-rc", "order-shipping", "opposite-order", src,
		"start ship-1 on A; start ship-2 on B; step A 2; step B 2; step A; step B; finish A")
	assertSteps(t, tr.Handlers[0], `
A deliver
B deliver
A sql BEGIN
A sql UPDATE rows=1
B sql BEGIN
B sql UPDATE rows=1
A blocked UPDATE on=B
B sql UPDATE error=40P01
B abort
B rollback ROLLBACK
A sql UPDATE rows=1
A sql COMMIT
A ack`)
}

// Advisory locks serialise check-then-insert at read committed: B waits on
// A's lock, and its check, which starts after A's commit, sees A's row.
func TestPostgresLedger_AdvisoryLockSerialisesCheckThenInsertAtReadCommitted(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	const src = `@on credit
BEGIN;
SELECT pg_advisory_xact_lock(hashtext(:message_id));
SELECT 1 FROM shipments WHERE message_id = :message_id;
@stop-if-found
INSERT INTO shipments(order_id, message_id, shipped_at) VALUES (:account_id, :message_id, :now);
COMMIT;`
	tr := runOnPostgres(t, pg, "postgres-rc", "concurrent-duplicate", "advisory", src,
		"start msg-1 on A; start msg-1 on B; step A 2; step B 2; finish A; finish B")
	assertSteps(t, tr.Handlers[0], `
A deliver
B deliver
A sql BEGIN
A sql SELECT found=1
B sql BEGIN
B blocked SELECT on=A
A sql SELECT found=0
A sql INSERT rows=1
A sql COMMIT
A ack
B sql SELECT found=1
B sql SELECT found=1
B stop ROLLBACK
B ack`)
	// At repeatable read B's snapshot is taken by the lock's statement,
	// before A commits: its check misses A's row, and both insert.
	tr = runOnPostgres(t, pg, "postgres-rr", "concurrent-duplicate", "advisory", src,
		"start msg-1 on A; start msg-1 on B; step A 2; step B 2; finish A; finish B")
	if n := len(tr.Handlers[0].Ledger[2].Rows); n != 2 {
		t.Errorf("repeatable read: %d shipments rows, want 2:\n%s", n, strings.Join(stepLines(tr.Handlers[0]), "\n"))
	}
}

// The same request twice gives byte-identical traces on PostgreSQL too:
// the scheduler decides, the database only answers.
func TestPostgresLedger_SameScriptSameTrace(t *testing.T) {
	pg := testPostgresLedgers(t, 2)
	for _, ledger := range []string{"postgres-rc", "postgres-rr", "postgres-serializable"} {
		lg, _ := ParseLedger(ledger, pg)
		var prev []byte
		for i := 0; i < 3; i++ {
			tr, err := Run(context.Background(), Request{Scenario: "concurrent-duplicate", Script: raceScript, Ledger: lg})
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(tr)
			if err != nil {
				t.Fatal(err)
			}
			if prev != nil && !bytes.Equal(prev, b) {
				t.Fatalf("%s: run %d differs from the run before", ledger, i+1)
			}
			prev = b
		}
	}
}

// A session runs as the ledger's role, which can touch nothing but its
// own six tables, with its timeouts set.
func TestPostgresLedger_TheRoleTouchesNothingElse(t *testing.T) {
	pg := testPostgresLedgers(t, 2)
	lg, _ := ParseLedger("postgres-rc", pg)
	sc, _ := LookupScenario("concurrent-duplicate")
	tmpl, err := sc.template()
	if err != nil {
		t.Fatal(err)
	}
	l, err := lg.acquire(context.Background(), tmpl)
	if err != nil {
		t.Fatal(err)
	}
	defer l.pg.release()
	c, err := l.conn("A")
	if err != nil {
		t.Fatal(err)
	}
	other := pg.all[1].schema
	for _, q := range []string{
		"DELETE FROM pg_catalog.pg_database",
		"CREATE TABLE mine(i int)",
		"CREATE TABLE public.mine(i int)",
		"SELECT * FROM " + other + ".accounts",
		"DROP TABLE accounts",
		"ALTER TABLE accounts ADD COLUMN x int",
		"TRUNCATE accounts",
		"CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
	} {
		res := c.exec(context.Background(), q, nil, false)
		if code := pgSQLState(res.Err); code != "42501" && code != "42P01" {
			t.Errorf("%s: %v; want permission denied (42501)", q, res.Err)
		}
	}
	for setting, want := range map[string]string{"statement_timeout": "2s", "lock_timeout": "3s", "idle_in_transaction_session_timeout": "10s", "deadlock_timeout": "2ms", "is_superuser": "off"} {
		rr := c.pg.conn.ExecParams(context.Background(), "SELECT current_setting($1)", [][]byte{[]byte(setting)}, nil, nil, nil)
		var got string
		for rr.NextRow() {
			got = string(rr.Values()[0])
		}
		if _, err := rr.Close(); err != nil || got != want {
			t.Errorf("%s = %q (%v), want %s", setting, got, err, want)
		}
	}
}

// A learner's handler for a PostgreSQL ledger is checked by PostgreSQL's
// rules: SQLite-only syntax is refused at parse time with the line and a
// hint; PostgreSQL-only syntax (FOR UPDATE) is accepted.
func TestParseHandlerFor_PostgresDialectErrorsWithHints(t *testing.T) {
	lg := Ledger{Postgres: &PostgresLedgers{}, Isolation: IsolationReadCommitted}
	for _, tc := range []struct{ sql, want string }{
		{"INSERT OR IGNORE INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);", "ON CONFLICT DO NOTHING"},
		{"REPLACE INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);", "ON CONFLICT (key) DO UPDATE"},
		{"SELECT rowid FROM processed_messages;", "no rowid (42703)"},
		{"SELECT 1 FROM `accounts`;", "double quotes"},
		{"SELECT set_config('statement_timeout', '0', false);", "set_config(…) is not allowed"},
		{"SELECT 1 FROM pg_catalog.pg_database;", "pg_catalog.pg_database is not a ledger table"},
		{"DELETE FROM other.accounts;", "other.accounts is not a ledger table"},
	} {
		_, err := ParseHandlerFor("mine", "-- a comment\n"+tc.sql, lg)
		in, ok := err.(*InputError)
		if !ok || !strings.Contains(in.Msg, tc.want) || in.Line != 2 || !strings.Contains(in.Msg, "line 2") {
			t.Errorf("%s: %v; want an error on line 2 saying %q", tc.sql, err, tc.want)
		}
	}
	if _, err := ParseHandlerFor("mine", "BEGIN IMMEDIATE;\nCOMMIT;", lg); err == nil || !strings.Contains(err.Error(), "write BEGIN") {
		t.Errorf("BEGIN IMMEDIATE: %v", err)
	}
	// The ledger sets the isolation level: a BEGIN that picks its own would
	// make the verdict one of another level than the learner's choice.
	for _, tx := range []string{
		"BEGIN ISOLATION LEVEL READ COMMITTED;\nCOMMIT;",
		"BEGIN READ ONLY;\nCOMMIT;",
		"BEGIN;\nCOMMIT AND CHAIN;",
	} {
		_, err := ParseHandlerFor("mine", tx, lg)
		if err == nil || !strings.Contains(err.Error(), "alone") {
			t.Errorf("%q: %v; want it refused, BEGIN or COMMIT alone", tx, err)
		}
	}
	if _, err := ParseHandlerFor("mine", "BEGIN TRANSACTION;\nCOMMIT WORK;", lg); err != nil {
		t.Errorf("BEGIN TRANSACTION; COMMIT WORK: %v", err)
	}
	for _, ok := range []string{
		"SELECT 1 FROM processed_messages WHERE message_id = :message_id FOR UPDATE;",
		"INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now) ON CONFLICT (message_id) DO UPDATE SET processed_at = :now;",
		"SELECT pg_advisory_xact_lock(hashtext(:message_id));",
	} {
		if _, err := ParseHandlerFor("mine", ok, lg); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	// A handler parsed for SQLite and run on PostgreSQL is checked too,
	// before anything runs.
	h, err := ParseHandler("mine", "INSERT OR IGNORE INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Request{Scenario: "lost-ack", Custom: []*Handler{h}, Ledger: lg})
	if in, ok := err.(*InputError); !ok || !strings.Contains(in.Msg, "ON CONFLICT DO NOTHING") {
		t.Errorf("Run: %v; want the dialect error", err)
	}
}

func TestPgPositional_RewritesParametersOnly(t *testing.T) {
	for _, tc := range []struct{ in, out, names string }{
		{"UPDATE accounts SET balance = balance + :amount WHERE id = :account_id AND balance = :balance - :amount",
			"UPDATE accounts SET balance = balance + $1 WHERE id = $2 AND balance = $3 - $1", "amount account_id balance"},
		{"SELECT ':not_me', \":nor_me\", x::text FROM t -- :nope\nWHERE a = :now /* :no */",
			"SELECT ':not_me', \":nor_me\", x::text FROM t -- :nope\nWHERE a = $1 /* :no */", "now"},
		{"SELECT 'it''s :x' || :message_id", "SELECT 'it''s :x' || $1", "message_id"},
	} {
		out, names := pgPositional(tc.in)
		if out != tc.out || strings.Join(names, " ") != tc.names {
			t.Errorf("%q → %q %q; want %q %q", tc.in, out, names, tc.out, tc.names)
		}
	}
}

func FuzzPgDialect(f *testing.F) {
	f.Add("INSERT OR IGNORE INTO t VALUES (:message_id)")
	f.Add("SELECT 'a'':b' , \"x\" FROM t WHERE c = :now -- x")
	f.Add("/* unterminated")
	f.Add("'unterminated :x")
	f.Add("BEGIN ISOLATION LEVEL SERIALIZABLE")
	f.Add("COMMIT WORK")
	pgParserWarm() // before the first input, which would otherwise take seconds (pgCheckSQL parses)
	f.Fuzz(func(t *testing.T, q string) {
		out, names := pgPositional(q)
		if len(names) == 0 && out != q {
			t.Fatalf("no parameters, yet %q became %q", q, out)
		}
		pgDialectProblem(q)
		pgCheckSQL(&statement{SQL: q})
		if st := new(statement); strings.TrimSpace(q) != "" && st.fill(q) == nil {
			pgCheckSQL(st) // with its verb: transaction control too
		}
	})
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := pgHandlerFiles.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
