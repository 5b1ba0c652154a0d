package playground

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"modernc.org/sqlite"
)

// lookupInTx reads before it writes in one deferred transaction: in WAL
// mode its write cannot wait for the lock, and the loser of two
// overlapping copies meets SQLITE_BUSY or SQLITE_BUSY_SNAPSHOT.
const lookupInTx = `@on credit
BEGIN;
SELECT 1 FROM processed_messages WHERE message_id = :message_id;
@stop-if-found
INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now) ON CONFLICT DO NOTHING;
@stop-if-no-rows
UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;
COMMIT;
`

const (
	// B reads; A writes and commits; B's write meets a stale snapshot.
	snapshotSchedule = "start msg-1 on A; start msg-1 on B; step B 2; finish A; step B"
	// A holds the write lock; B's transaction has read and wants it too.
	lockHeldSchedule = "start msg-1 on A; start msg-1 on B; step A 3; step B 3"
)

func runSource(t *testing.T, scenario, source, script string) *HandlerTrace {
	t.Helper()
	h, err := ParseHandler("mine", source)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Run(context.Background(), Request{Scenario: scenario, Custom: []*Handler{h}, Script: script})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Handlers[0]
}

// TestRetry_SQLiteBusyReachesHandler: a busy error SQLite does not wait
// out reaches the handler as the driver reports it (SQLITE_BUSY (5) while
// the other holds the lock, SQLITE_BUSY_SNAPSHOT (517) after it
// committed); without @retry-on the handler fails, does not ack, and its
// transaction rolls back. Nothing retries it silently.
func TestRetry_SQLiteBusyReachesHandler(t *testing.T) {
	for _, c := range []struct{ name, script, want string }{
		{"BusySnapshot", snapshotSchedule, `
A deliver
B deliver
B sql BEGIN
B sql SELECT found=0
A sql BEGIN
A sql SELECT found=0
A sql INSERT rows=1
A sql UPDATE rows=1
A sql COMMIT
A ack
B sql INSERT error=database is locked (517)
B abort
B rollback ROLLBACK`},
		{"Busy", lockHeldSchedule, `
A deliver
B deliver
A sql BEGIN
A sql SELECT found=0
A sql INSERT rows=1
B sql BEGIN
B sql SELECT found=0
B sql INSERT error=database is locked (5) (SQLITE_BUSY)
B abort
B rollback ROLLBACK`},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := runSource(t, "concurrent-duplicate", lookupInTx, c.script)
			assertSteps(t, h, c.want)
			for _, st := range h.Steps {
				if st.Error != "" && (!strings.Contains(st.Note, "reaches the handler, which fails") || !strings.Contains(st.Note, "@retry-on busy")) {
					t.Errorf("step %d: note %q does not say the error reached the handler and how to retry", st.Index, st.Note)
				}
			}
		})
	}
	// The broker delivers it again; the redelivery finds the id and acks.
	h := runSource(t, "concurrent-duplicate", lookupInTx, lockHeldSchedule+"; finish A; redeliver msg-1")
	if h.Verdict != VerdictOK {
		t.Errorf("after the redelivery: verdict %s %+v", h.Verdict, h.Violations)
	}
}

// TestRetry_RetryOnBusyRetriesFromBegin: @retry-on busy rolls back and
// runs the transaction again from its BEGIN, each retry a step; after
// SQLITE_BUSY the retry backs off until the lock holder's transaction ends.
func TestRetry_RetryOnBusyRetriesFromBegin(t *testing.T) {
	for _, c := range []struct{ name, word, script, want string }{
		{"BusySnapshot", "busy", snapshotSchedule + "; finish B", `
A deliver
B deliver
B sql BEGIN
B sql SELECT found=0
A sql BEGIN
A sql SELECT found=0
A sql INSERT rows=1
A sql UPDATE rows=1
A sql COMMIT
A ack
B sql INSERT error=database is locked (517)
B rollback ROLLBACK
B note retry
B sql BEGIN
B sql SELECT found=1
B stop ROLLBACK
B ack`},
		{"Busy", "conflict", lockHeldSchedule + "; finish B; finish A", `
A deliver
B deliver
A sql BEGIN
A sql SELECT found=0
A sql INSERT rows=1
B sql BEGIN
B sql SELECT found=0
B sql INSERT error=database is locked (5) (SQLITE_BUSY)
B rollback ROLLBACK
B note retry
B note
A sql UPDATE rows=1
B note
A sql COMMIT
B sql BEGIN
B sql SELECT found=1
B stop ROLLBACK
B ack
A ack`},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := runSource(t, "concurrent-duplicate", "@retry-on "+c.word+"\n"+lookupInTx, c.script)
			assertSteps(t, h, c.want)
			if h.Verdict != VerdictOK {
				t.Errorf("verdict %s %+v", h.Verdict, h.Violations)
			}
			var notes []string
			for _, st := range h.Steps {
				if st.Kind == StepNote && st.Worker == "B" && !strings.Contains(st.Note, "cannot go on yet") {
					notes = append(notes, st.Note)
				}
			}
			if len(notes) == 0 || notes[0] != "@retry-on "+c.word+": B runs its transaction again from statement 1 (retry 1)" {
				t.Errorf("notes %q", notes)
			}
			for _, n := range notes[1:] {
				if !strings.HasPrefix(n, "B backs off before its retry: A holds the write lock") {
					t.Errorf("note %q", n)
				}
			}
		})
	}
}

// TestRetry_RetriesAreBounded: a transaction whose snapshot goes stale
// again and again retries five times, says it gives up, and fails.
func TestRetry_RetriesAreBounded(t *testing.T) {
	src := "@retry-on busy\n@on credit\nBEGIN;\nSELECT balance FROM accounts WHERE id = :account_id;\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n"
	script := "start msg-1 on B; step B 2" + strings.Repeat("; publish msg-1 to A; step B; step B 2", maxTransactionRetries+1)
	h := runSource(t, "concurrent-duplicate", src, script)
	retries, gaveUp, aborted := 0, false, false
	for _, st := range h.Steps {
		switch {
		case strings.HasPrefix(st.Note, "@retry-on busy: B runs its transaction again"):
			retries++
		case st.Note == fmt.Sprintf("@retry-on busy: B has retried its transaction %d times, the most it will; it gives up", maxTransactionRetries):
			gaveUp = true
		case st.Kind == StepAbort && st.Worker == "B":
			aborted = gaveUp
		}
	}
	if retries != maxTransactionRetries || !gaveUp || !aborted {
		t.Errorf("%d retries, gave up %v, then failed %v; want %d, true, true\n%s", retries, gaveUp, aborted, maxTransactionRetries, strings.Join(stepLines(h), "\n"))
	}
}

// TestRetry_RetryOnParses: @retry-on takes busy, serialization_failure and
// conflict, alone or together; anything else is an error that lists them.
func TestRetry_RetryOnParses(t *testing.T) {
	body := "@on credit\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\n"
	for _, c := range []struct {
		arg  string
		want []string
		err  string
	}{
		{"busy", []string{"busy"}, ""},
		{"serialization_failure", []string{"serialization_failure"}, ""},
		{"conflict", []string{"conflict"}, ""},
		{"busy serialization_failure", []string{"busy", "serialization_failure"}, ""},
		{"busy, serialization_failure", []string{"busy", "serialization_failure"}, ""},
		{"", nil, "handler: handler mine, line 1: @retry-on needs the errors to retry on: busy (SQLite's SQLITE_BUSY and SQLITE_BUSY_SNAPSHOT), serialization_failure (PostgreSQL's 40001 and 40P01) or conflict (all four, on either ledger)"},
		{"deadlock", nil, `handler: handler mine, line 1: @retry-on takes busy (SQLite's SQLITE_BUSY and SQLITE_BUSY_SNAPSHOT), serialization_failure (PostgreSQL's 40001 and 40P01) or conflict (all four, on either ledger), not "deadlock"`},
		{"busy busy", nil, "handler: handler mine, line 1: @retry-on names busy twice"},
	} {
		h, err := ParseHandler("mine", "@retry-on "+c.arg+"\n"+body)
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%q: error %v, want %q", c.arg, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.arg, err)
		case c.err == "" && strings.Join(h.RetryOn, " ") != strings.Join(c.want, " "):
			t.Errorf("%q: %v, want %v", c.arg, h.RetryOn, c.want)
		}
	}
}

// TestRetry_ConflictRetriesOnEitherLedger: one handler script with
// @retry-on conflict retries on SQLite's SQLITE_BUSY_SNAPSHOT and on
// PostgreSQL's 40001, and both runs end ok; without it, both fail (A's
// ack deletes the copy both hold, so nothing is owed).
func TestRetry_ConflictRetriesOnEitherLedger(t *testing.T) {
	const script = "start msg-1 on A; start msg-1 on B; step A 2; step B 2; finish A; finish B"
	endsWith := func(h *HandlerTrace, tail string) bool {
		return strings.HasSuffix(strings.Join(stepLines(h), "\n"), strings.TrimSpace(tail))
	}
	h := runSource(t, "concurrent-duplicate", "@retry-on conflict\n"+lookupInTx, script)
	if h.Verdict != VerdictOK || !endsWith(h, "B sql INSERT error=database is locked (517)\nB rollback ROLLBACK\nB note retry\nB sql BEGIN\nB sql SELECT found=1\nB stop ROLLBACK\nB ack") {
		t.Errorf("SQLite: %s\n%s", h.Verdict, strings.Join(stepLines(h), "\n"))
	}
	h = runSource(t, "concurrent-duplicate", lookupInTx, script)
	if h.Verdict != VerdictOK || !endsWith(h, "B sql INSERT error=database is locked (517)\nB abort\nB rollback ROLLBACK") {
		t.Errorf("SQLite without @retry-on: %s\n%s", h.Verdict, strings.Join(stepLines(h), "\n"))
	}

	pg := testPostgresLedgers(t, 1)
	tr := runOnPostgres(t, pg, "postgres-rr", "concurrent-duplicate", "mine", "@retry-on conflict\n"+lookupInTx, script)
	h = tr.Handlers[0]
	if h.Verdict != VerdictOK || !endsWith(h, "B sql INSERT error=40001\nB rollback ROLLBACK\nB note retry\nB sql BEGIN\nB sql SELECT found=1\nB stop ROLLBACK\nB ack") {
		t.Errorf("PostgreSQL: %s\n%s", h.Verdict, strings.Join(stepLines(h), "\n"))
	}
	tr = runOnPostgres(t, pg, "postgres-rr", "concurrent-duplicate", "mine", lookupInTx, script)
	h = tr.Handlers[0]
	if h.Verdict != VerdictOK || !endsWith(h, "B sql INSERT error=40001\nB abort\nB rollback ROLLBACK") {
		t.Errorf("PostgreSQL without @retry-on: %s\n%s", h.Verdict, strings.Join(stepLines(h), "\n"))
	}
}

// TestRetry_BusyCodesMatchARealWALFile replays the engine's schedules,
// statement by statement, on a real WAL database file with two plain
// connections (busy_timeout=0): the driver hands the application
// SQLITE_BUSY (5) and SQLITE_BUSY_SNAPSHOT (517) exactly where the
// engine's trace has the same error reach the handler, and every other
// statement and the committed rows agree.
func TestRetry_BusyCodesMatchARealWALFile(t *testing.T) {
	sc, _ := LookupScenario("concurrent-duplicate")
	for _, c := range []struct {
		name, source, script string
		code                 int
	}{
		{"BusySnapshot", lookupInTx, snapshotSchedule, 517},
		{"Busy", lookupInTx, lockHeldSchedule, 5},
		{"BusySnapshotRetried", "@retry-on busy\n" + lookupInTx, snapshotSchedule + "; finish B", 517},
		{"BusyRetried", "@retry-on busy\n" + lookupInTx, lockHeldSchedule + "; finish B; finish A", 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := runSource(t, sc.Name, c.source, c.script)
			ref := newWALReference(t, sc)
			defer ref.close()
			reached := 0
			for i, st := range h.Steps {
				if st.SQL == "" {
					continue
				}
				_, err := ref.exec(st.Worker, st.SQL, st.Args)
				var se *sqlite.Error
				if !errors.As(err, &se) || se.Code()&0xff != 5 {
					if st.Error != "" && err == nil {
						t.Fatalf("step %d (%s %s): engine error %q, the WAL file none", st.Index, st.Worker, st.SQL, st.Error)
					}
					continue
				}
				if err.Error() != st.Error {
					t.Fatalf("step %d (%s %s): engine error %q, the WAL file %q", st.Index, st.Worker, st.SQL, st.Error, err)
				}
				if st.Kind == StepBlocked {
					continue // a wait SQLite's busy handler would do
				}
				reached++
				if se.Code() != c.code || st.Kind != StepSQL {
					t.Errorf("step %d: the driver answered %d, the engine's %s step %q; want %d reaching the handler", st.Index, se.Code(), st.Kind, st.Error, c.code)
				}
				// The handler saw it: it fails, or its @retry-on rolls back.
				if next := h.Steps[i+1]; next.Worker != st.Worker || next.Kind != StepAbort && next.Kind != StepRollback {
					t.Errorf("step %d is followed by %s %s", st.Index, next.Worker, next.Kind)
				}
			}
			if reached != 1 {
				t.Errorf("%d busy errors reached the handler, want 1", reached)
			}
			fresh := newWALReference(t, sc)
			defer fresh.close()
			fresh.compare(c.name, h)
		})
	}
}

// TestRetry_BuiltinsThatCanMeetBusySaySo: on SQLite only a deferred
// transaction that reads before its first write can have SQLITE_BUSY or
// SQLITE_BUSY_SNAPSHOT reach its handler (every other wait is SQLite's
// busy handler's); a built-in handler with such a transaction declares
// @retry-on busy or conflict. (None has one today: each writes first,
// which takes the lock before it reads. TestLocking_DifferentialAgainstWALFiles
// checks the same of their runs.)
func TestRetry_BuiltinsThatCanMeetBusySaySo(t *testing.T) {
	readsBeforeWriting := func(h *Handler) bool {
		for _, stmts := range h.sections {
			inTx, read, wrote := false, false, false
			for _, st := range stmts {
				switch {
				case st.Verb == "BEGIN":
					inTx, read, wrote = !st.Immediate, false, false
				case isTxEnd(st.Verb):
					inTx = false
				case !inTx || st.Call != nil:
				case st.isQuery():
					read = read || !wrote
				default:
					if read && !wrote {
						return true
					}
					wrote = true
				}
			}
		}
		return false
	}
	if !readsBeforeWriting(mustParse(t, lookupInTx)) || readsBeforeWriting(mustParse(t, "@on credit\nBEGIN IMMEDIATE;\nSELECT 1 FROM accounts;\nUPDATE accounts SET balance = 1;\nCOMMIT;\n")) {
		t.Fatal("the rule does not tell a read-then-write transaction")
	}
	for _, h := range Handlers() {
		if _, ok := h.retriesOn(RetryBusy); readsBeforeWriting(h) && !ok {
			t.Errorf("%s reads before it writes in a deferred transaction: SQLITE_BUSY can reach it, and it does not declare @retry-on busy", h.Name)
		}
	}
}

func mustParse(t *testing.T, src string) *Handler {
	t.Helper()
	h, err := ParseHandler("mine", src)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestRetry_CounterexamplesNameTheBusyCode: a checker's story names the
// busy code a handler failed on, SQLITE_BUSY or SQLITE_BUSY_SNAPSHOT.
func TestRetry_CounterexamplesNameTheBusyCode(t *testing.T) {
	for in, want := range map[string]string{
		"database is locked (5) (SQLITE_BUSY)":                    "database is locked: SQLITE_BUSY",
		"database is locked (517)":                                "database is locked: SQLITE_BUSY_SNAPSHOT",
		"constraint failed: UNIQUE constraint failed: t.c (1555)": "UNIQUE constraint failed: t.c",
	} {
		if got := cleanSQLError(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}
