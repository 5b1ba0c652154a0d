package playground

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// TestPostgresLedger_ACancelledRunEndsItsStatementBeforeTheReset: a run
// whose context ends while a statement is in flight (a parallel check
// cancels the subtrees after the failing one) keeps its session: the
// release cancels the statement and waits for its end before the rows are
// reset for the next run. It did not: pgconn closed a connection whose
// context ended mid-query and sent the cancel request asynchronously; on a
// loaded machine the server could still run the autocommitted statement
// to its commit after the release had reset the rows (in the background,
// since 017b946), and the next run on the ledger, which skips its own
// reset, began with a row its template does not have. In the checker a
// fresh run then differed from the search's: "explore: the counterexample
// did not reproduce" (TestCheckOn_PostgresMergedMatchesUnmerged,
// postgres-rr/start, on a loaded machine).
func TestPostgresLedger_ACancelledRunEndsItsStatementBeforeTheReset(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	lg, _ := ParseLedger("postgres-rr", pg)
	sc, _ := LookupScenario("concurrent-duplicate")
	tmpl, err := sc.template()
	if err != nil {
		t.Fatal(err)
	}
	const slow = "INSERT INTO processed_messages(message_id, processed_at) SELECT 'late', 1 FROM pg_sleep(0.5)"
	pgPlanOf(slow) // the parser's start, before the clock below
	ctx, cancel := context.WithCancel(context.Background())
	l, err := lg.acquire(ctx, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.conn("A")
	if err != nil {
		t.Fatal(err)
	}
	// On the engine's own connection (no allow-list): a slow autocommitted
	// INSERT, its run cancelled while the server works on it.
	time.AfterFunc(150*time.Millisecond, cancel)
	res := c.exec(ctx, slow, nil, false)
	t.Logf("the cancelled statement: %v", res.Err)
	if c.pg.conn.IsClosed() {
		t.Error("the session was closed with its statement in flight: the server may still commit it")
	}
	l.pg.release()

	l, err = lg.acquire(context.Background(), tmpl) // the same ledger: a pool of one
	if err != nil {
		t.Fatal(err)
	}
	defer l.pg.release()
	time.Sleep(time.Second) // past the statement's end, had it run on
	c, err = l.conn("A")
	if err != nil {
		t.Fatal(err)
	}
	rr := c.pg.conn.ExecParams(context.Background(), "SELECT count(*) FROM processed_messages", nil, nil, nil, nil)
	var n string
	for rr.NextRow() {
		n = string(rr.Values()[0])
	}
	if _, err := rr.Close(); err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa(len(tmpl.rows["processed_messages"])); n != want {
		t.Errorf("the next run starts with %s rows in processed_messages, its template %s", n, want)
	}
}

// TestPostgresLedger_AFailedResetIsRedoneByTheNextRun: an acquire whose
// reset fails (its context already cancelled: a parallel check's later
// subtree) closes the ledger's sessions, the monitor among them. The next
// run on the ledger, with the template the ledger last held, skipped its
// reset, found no monitor and panicked asking pg_blocking_pids (seen in
// CI). It must reset, and run as on a fresh ledger.
func TestPostgresLedger_AFailedResetIsRedoneByTheNextRun(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	lg, _ := ParseLedger("postgres-rc", pg)
	race := Request{Scenario: "concurrent-duplicate", Handlers: []string{"dedupe-tx"}, Ledger: lg,
		Script: "start msg-1 on A; start msg-1 on B; step A 2; step B 2; finish A; finish B"}
	want, err := Run(context.Background(), race)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := LookupScenario("lost-ack")
	tmpl, err := other.template()
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for range 50 { // acquire takes the free ledger or meets its cancelled context, at random
		if l, err := lg.acquire(cancelled, tmpl); err == nil {
			l.pg.release()
		}
	}
	pg.cleaning.Wait()
	got, err := Run(context.Background(), race)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := string(mustJSON(t, want)), string(mustJSON(t, got)); a != b {
		t.Errorf("after a failed reset the race ran differently:\n%s\nwant:\n%s", b, a)
	}
}
