package playground

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Checking exercises on PostgreSQL (explore_pg.go), on a real server: the
// tests need IDEMLAB_TEST_DATABASE and skip without it unless
// IDEMLAB_REQUIRE_POSTGRES=1 (internal/pgtest).

// pgVerdict is what a check on PostgreSQL must answer for one handler at
// one isolation level: "pass", "fail" (a counterexample), or "error" (the
// handler does not run there: SQLite-only syntax); for a fail, the rule it
// breaks and, when the break is a statement's error, its SQLSTATE.
type pgVerdict struct {
	outcome  string
	rule     string // "" any
	sqlState string // "" none asserted
}

var (
	pgPass = pgVerdict{outcome: "pass"}
	// pgSQLiteOnly: SQLite-only syntax is refused before anything runs,
	// with a hint at PostgreSQL's way.
	pgSQLiteOnly = pgVerdict{outcome: "error"}
	pgFail       = pgVerdict{outcome: "fail"}
	pgNotChecked = pgVerdict{}
	// pgUnacked23505: a copy's INSERT fails with 23505 on every
	// redelivery; its handler never acks (a poison message).
	pgUnacked23505 = pgVerdict{outcome: "fail", rule: RuleAckedNotRetried, sqlState: "23505"}
)

// pgRaceVerdicts is what PostgreSQL makes of the mutation suite's handlers
// for race-check-then-insert (testdata/mutations.yaml), at READ COMMITTED,
// REPEATABLE READ and SERIALIZABLE. Every wrong handler stays wrong. The
// correct ones differ from SQLite, where one writer at a time makes a
// check inside the transaction safe:
var pgRaceVerdicts = map[string][3]pgVerdict{
	"naive-increment":                   {pgFail, pgFail, pgFail},
	"autocommit-dedupe":                 {pgFail, pgFail, pgFail},
	"mark-before":                       {pgFail, pgFail, pgFail},
	"mark-after":                        {pgFail, pgFail, pgFail},
	"check-then-insert-autocommit":      {pgFail, pgFail, pgFail},
	"abort-on-duplicate":                {pgUnacked23505, pgFail, pgFail},
	"replace-always-changes-a-row":      {pgSQLiteOnly, pgSQLiteOnly, pgSQLiteOnly},
	"in-process-filter-only":            {pgFail, pgFail, pgFail},
	"effect-and-id-in-two-transactions": {pgFail, pgFail, pgFail},
	// At REPEATABLE READ and SERIALIZABLE the loser's INSERT … ON CONFLICT
	// of a row its snapshot cannot see fails with 40001; its redelivery's
	// lookup finds the id and acks: no double credit, no poison message.
	"select-then-act-in-two-transactions": {pgFail, pgPass, pgPass},
	// INSERT OR IGNORE and BEGIN IMMEDIATE are SQLite's.
	"insert-or-ignore":           {pgSQLiteOnly, pgSQLiteOnly, pgSQLiteOnly},
	"begin-immediate-then-check": {pgSQLiteOnly, pgSQLiteOnly, pgSQLiteOnly},
	// ON CONFLICT DO NOTHING waits for the first copy's transaction, then
	// skips at READ COMMITTED; at REPEATABLE READ and SERIALIZABLE the row
	// it would skip is not in its snapshot, and it raises 40001 instead:
	// the loser does not ack, and its redelivery skips the id and acks.
	"update-before-the-id-in-one-transaction": {pgPass, pgPass, pgPass},
	"returning":                         {pgPass, pgPass, pgPass},
	"filter-in-front-of-the-dedupe-row": {pgPass, pgPass, pgPass},
	// Both SELECTs run before either INSERT and see no row: PostgreSQL has
	// no database-wide write lock, so the second INSERT waits on the
	// primary key, then fails (23505 at READ COMMITTED and REPEATABLE
	// READ; at SERIALIZABLE the insert of a key its snapshot cannot see is
	// a serialization failure). Not a double credit, nor a poison message:
	// the redelivery's lookup finds the id and acks.
	"check-inside-the-transaction": {pgPass, pgPass, pgPass},
	"insert-where-not-exists":      {pgPass, pgPass, pgPass},
}

// pgRaceExtras are handlers that only PostgreSQL tells apart.
var pgRaceExtras = []struct {
	name, source string
	verdicts     [3]pgVerdict
}{
	// The solution with a retry on 40001: correct at every level.
	{"solution-with-retry", "@retry-on serialization_failure\n" + raceSolution, [3]pgVerdict{pgPass, pgPass, pgPass}},
	// A check inside the transaction, retried on 40001: at READ COMMITTED
	// and REPEATABLE READ the loser's error is 23505, which is no
	// serialization failure, so it is not retried; the broker's
	// redelivery finds the id and acks. (At SERIALIZABLE the retry's
	// SELECT sees the first copy's row and stops; that full check is
	// TestCheckOn_PostgresMergedMatchesUnmerged's.)
	{"check-inside-with-retry", raceCheckInsideWithRetry, [3]pgVerdict{pgPass, pgPass, pgNotChecked}},
}

const raceCheckInsideWithRetry = `@retry-on serialization_failure
@on credit
BEGIN;
SELECT 1 FROM processed_messages WHERE message_id = :message_id;
@stop-if-found
INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);
UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;
COMMIT;
`

const raceSolution = `@on credit
BEGIN;
INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now) ON CONFLICT DO NOTHING;
@stop-if-no-rows
UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;
COMMIT;
`

// TestCheckOn_PostgresMutationSuite checks the race exercise's wrong and
// correct handlers on PostgreSQL at each isolation level, and
// replays every counterexample on PostgreSQL to the same break. The checks
// run pgChecksAtOnce at a time on one pool (each on ledgers of its own
// while it holds them, as concurrent learners' checks do); each subtest
// then judges one check's answer.
func TestCheckOn_PostgresMutationSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs about forty checks on PostgreSQL")
	}
	relaxCheckTimeout(t)
	checkTimeout = 3 * time.Minute // a full check at SERIALIZABLE, on a loaded machine
	pg := testPostgresLedgers(t, 16)
	ex := exerciseByID(t, "race-check-then-insert")
	type handler struct {
		name, source string
		verdicts     [3]pgVerdict
	}
	var handlers []handler
	for _, g := range readMutationGroups(t) {
		if !contains(g.Exercises, ex.ID) {
			continue
		}
		for _, m := range append(g.Wrong, g.Right...) {
			v, ok := pgRaceVerdicts[m.Name]
			if !ok {
				t.Fatalf("mutation %s has no PostgreSQL verdict in pgRaceVerdicts", m.Name)
			}
			handlers = append(handlers, handler{m.Name, m.Source, v})
		}
	}
	for _, e := range pgRaceExtras {
		handlers = append(handlers, handler(e))
	}
	type check struct {
		name    string
		lg      Ledger
		h       handler
		want    pgVerdict
		res     *CheckResult
		err     error
		elapsed time.Duration
	}
	var checks []*check
	for i, level := range []string{"postgres-rc", "postgres-rr", "postgres-serializable"} {
		lg, err := ParseLedger(level, pg)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range handlers {
			if h.verdicts[i] != pgNotChecked {
				checks = append(checks, &check{name: level + "/" + h.name, lg: lg, h: h, want: h.verdicts[i]})
			}
		}
	}
	inParallel(len(checks), pgChecksAtOnce, func(i int) {
		c := checks[i]
		start := time.Now()
		c.res, c.err = CheckOn(context.Background(), ex, c.h.source, c.lg)
		c.elapsed = time.Since(start)
	})
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if c.err != nil {
				t.Fatal(c.err)
			}
			t.Logf("checked in %v", c.elapsed.Round(time.Millisecond))
			assertPgVerdict(t, c.res, c.want)
			if c.res.Counterexample != nil {
				assertReplaysOnPostgres(t, c.lg, c.h.source, c.res.Counterexample)
			}
		})
	}
}

func assertPgVerdict(t *testing.T, res *CheckResult, want pgVerdict) {
	t.Helper()
	ce := res.Counterexample
	switch want.outcome {
	case "pass":
		if !res.Passed {
			t.Fatalf("refused: %+v %+v %s", ce, res.Error, res.Unfinished)
		}
	case "error":
		if res.Passed || res.Error == nil || res.Error.Line == 0 || !strings.Contains(res.Error.Message, "SQLite's") {
			t.Fatalf("want a dialect error with its line, got %+v %+v", res.Error, ce)
		}
	case "fail":
		if res.Passed || ce == nil {
			t.Fatalf("want a counterexample, got passed=%v %+v %s", res.Passed, res.Error, res.Unfinished)
		}
		if want.rule != "" && ce.Invariant != want.rule {
			t.Errorf("breaks %s (%s), want %s", ce.Invariant, ce.Violation, want.rule)
		}
		if want.sqlState != "" && !strings.Contains(ce.Violation, "SQLSTATE "+want.sqlState) {
			t.Errorf("violation %q, want SQLSTATE %s", ce.Violation, want.sqlState)
		}
		t.Logf("%s → %s", ce.Script, ce.Violation)
	}
}

// assertReplaysOnPostgres plays a counterexample's script in the
// PostgreSQL playground with the learner's handler: the run breaks as the
// checker said. A handler that failed without acking shows its failing
// statement (the same error on the same line) and the abort; any other
// break is a verdict that is not ok, its figures off the expected ones.
func assertReplaysOnPostgres(t *testing.T, lg Ledger, source string, ce *Counterexample) {
	t.Helper()
	h, err := ParseHandlerFor("mine", source, lg)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Run(context.Background(), Request{Scenario: ce.Scenario, Events: ce.Schedule, Custom: []*Handler{h}, Ledger: lg})
	if err != nil {
		t.Fatal(err)
	}
	got := tr.Handlers[0]
	if ce.Invariant == RuleAckedNotRetried {
		failed, aborted := false, false
		for _, st := range got.Steps {
			failed = failed || ce.SQLError != nil && st.Kind == StepSQL && st.Line == ce.SQLError.Line && cleanSQLError(st.Error) == ce.SQLError.Message
			aborted = aborted || st.Kind == StepAbort
		}
		if !failed || !aborted {
			t.Errorf("the replay on %s of %q: failing step %v, abort %v; the checker said %s", lg.Name(), ce.Script, failed, aborted, ce.Violation)
		}
		return
	}
	if got.OK || reflect.DeepEqual(got.Actual, got.Expected) {
		t.Errorf("the playground on %s says %s for %q with figures %v (expected %v); the checker said %s", lg.Name(), got.Verdict, ce.Script, got.Actual, got.Expected, ce.Violation)
	}
}

// TestCheckOn_PostgresDeterministic: the same check twice gives the same
// answer, counterexample and counts included, though its subtrees run in
// parallel.
func TestCheckOn_PostgresDeterministic(t *testing.T) {
	relaxCheckTimeout(t)
	checkTimeout = 5 * time.Minute // one ledger at a time, on a loaded machine
	pg := testPostgresLedgers(t, 4)
	ex := exerciseByID(t, "race-check-then-insert")
	for _, level := range []string{"postgres-rc", "postgres-serializable"} {
		lg, _ := ParseLedger(level, pg)
		a, err := CheckOn(context.Background(), ex, ex.Start, lg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := CheckOn(context.Background(), ex, ex.Start, lg)
		if err != nil {
			t.Fatal(err)
		}
		if a.Counterexample == nil || !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two checks differ or pass:\n%+v %+v\n%+v %+v", level, a, a.Counterexample, b, b.Counterexample)
		}
		if a.Ledger != level {
			t.Errorf("ledger %q, want %q", a.Ledger, level)
		}
	}
	// A pass explores every state whichever subtree meets it first: the
	// same counts each time, and the same as one ledger at a time.
	one := testPostgresLedgers(t, 1)
	var passes []*CheckResult
	for _, p := range []*PostgresLedgers{pg, pg, one} {
		lg, _ := ParseLedger("postgres-rc", p)
		res, err := CheckOn(context.Background(), ex, ex.Solution, lg)
		if err != nil {
			t.Fatal(err)
		}
		passes = append(passes, res)
	}
	if !passes[0].Passed || !reflect.DeepEqual(passes[0], passes[1]) || !reflect.DeepEqual(passes[0], passes[2]) {
		t.Errorf("three passes differ: %+v %+v %+v", passes[0], passes[1], passes[2])
	}
}

// TestCheckOn_PostgresBadHandler: SQLite-only syntax is an error with its
// line and PostgreSQL's way, before anything runs.
func TestCheckOn_PostgresBadHandler(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	lg, _ := ParseLedger("postgres-rc", pg)
	ex := exerciseByID(t, "dedupe-credit")
	res, err := CheckOn(context.Background(), ex, "@on credit\nBEGIN;\nINSERT OR IGNORE INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\nCOMMIT;\n", lg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed || res.Error == nil || res.Error.Line != 3 || !strings.Contains(res.Error.Message, "ON CONFLICT DO NOTHING") {
		t.Errorf("got %+v", res.Error)
	}
}

// TestCheckOn_PostgresOutOfTimeSaysWhatItCovered: a check that runs out
// of time never passes; it says which bounds it did not finish.
func TestCheckOn_PostgresOutOfTimeSaysWhatItCovered(t *testing.T) {
	pg := testPostgresLedgers(t, 2)
	lg, _ := ParseLedger("postgres-rc", pg)
	ex := exerciseByID(t, "race-check-then-insert")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := CheckOn(ctx, ex, ex.Solution, lg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed || res.Counterexample != nil || !strings.Contains(res.Unfinished, "t did not finish trying every schedule of at most") {
		t.Errorf("got passed=%v unfinished=%q", res.Passed, res.Unfinished)
	}
}

// BenchmarkCheck_Postgres gives each exercise's check time on PostgreSQL
// at each isolation level (the solution at READ COMMITTED; at REPEATABLE
// READ and SERIALIZABLE the solution with its retry on 40001, as a real
// consumer has it: every schedule of the bounds explored), and the SQLite
// check of the solution in the same run as the baseline.
func BenchmarkCheck_Postgres(b *testing.B) {
	pg := testPostgresLedgers(b, 8)
	type bench struct {
		name, ledger, source string
		ex                   *Exercise
	}
	var benches []bench
	for _, ex := range exerciseFixtures(b) {
		retry := "@retry-on serialization_failure\n" + ex.Solution
		benches = append(benches, bench{ex.ID + "/sqlite", "sqlite", ex.Solution, ex},
			bench{ex.ID + "/postgres-rc", "postgres-rc", ex.Solution, ex},
			bench{ex.ID + "/postgres-rr", "postgres-rr", retry, ex},
			bench{ex.ID + "/postgres-serializable", "postgres-serializable", retry, ex})
	}
	for _, c := range benches {
		b.Run(c.name, func(b *testing.B) {
			lg, err := ParseLedger(c.ledger, pg)
			if err != nil {
				b.Fatal(err)
			}
			var res *CheckResult
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				res, err = CheckOn(ctx, c.ex, c.source, lg)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				if !res.Passed {
					b.Fatalf("the solution did not pass: %+v %+v %s", res.Error, res.Counterexample, res.Unfinished)
				}
			}
			b.ReportMetric(float64(res.DistinctStates), "states")
		})
	}
}
