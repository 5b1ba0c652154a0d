package playground

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"idemlab/internal/pgtest"
)

// The attacks of issue 25 on a PostgreSQL ledger, each run with
// PostgreSQL's parser on (the allow-list refuses it before anything runs)
// and off (the role's privileges alone hold), each followed by a normal
// learner's run on the same pooled ledger and sessions: that run's trace
// is byte-identical to a fresh pool's.

// pgNormalLearner is a learner's handler that takes the ledger's advisory
// lock, writes a dedupe row and the effect: its trace shows any setting,
// lock, table or privilege an earlier run left behind.
const pgNormalLearner = `@on credit
BEGIN;
SELECT pg_advisory_xact_lock(hashtext(:message_id));
INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now) ON CONFLICT DO NOTHING;
UPDATE accounts SET balance = balance + :amount WHERE id = :account_id AND NOT EXISTS (SELECT 1 FROM processed_messages WHERE message_id = :message_id AND processed_at <> :now);
COMMIT;
`

// pgAttacks: each statement, and what the privileges alone answer when the
// parser is off ("" : it runs, and changes nothing another run could see).
var pgAttacks = []struct{ name, sql, off string }{
	{"quoted-dash-set-config", `SELECT 1 AS "--", set_config('default_transaction_read_only','on',false) FROM accounts`, "42501"},
	{"set-config-search-path", `SELECT set_config('search_path', 'pg_catalog', false)`, "42501"},
	{"temp-table-shadows-a-ledger-table", `SELECT id, balance, 1 AS "--" INTO TEMP TABLE accounts FROM accounts`, "42501"},
	{"large-object", `SELECT 1 AS "--", lo_from_bytea(0, 'x') FROM accounts`, "42501"},
	{"large-object-create", `SELECT lo_create(0)`, "42501"},
	{"version", `SELECT version()`, ""},
	{"notify-the-workshop-channel", `SELECT pg_notify('idemlab_workshop', 'x')`, "42501"},
	{"session-advisory-lock", `SELECT pg_advisory_lock(hashtext(:message_id))`, "42501"},
	{"catalog-advisory-xact-lock", `SELECT pg_catalog.pg_advisory_xact_lock(hashtext(:message_id))`, "42501"},
	{"two-key-advisory-lock", `SELECT pg_advisory_xact_lock(1, 2)`, "42501"},
	{"comma-join-pg-stat-activity", `SELECT s.query FROM accounts a, pg_stat_activity s`, "42501"},
	{"subquery-pg-stat-activity", `SELECT 1 FROM accounts WHERE id IN (SELECT query FROM pg_stat_activity)`, "42501"},
	{"backend-activity", `SELECT pg_stat_get_backend_activity(1)`, "42501"},
	{"terminate-own-session", `SELECT pg_terminate_backend(pg_backend_pid())`, "42501"},
	{"cancel-own-session", `SELECT pg_cancel_backend(pg_backend_pid())`, "42501"},
	{"other-schema", `SELECT * FROM public.accounts`, "42501"},
}

// pgTraceBytes runs the normal learner's race on lg and encodes the trace.
func pgTraceBytes(t *testing.T, lg Ledger) []byte {
	t.Helper()
	h, err := ParseHandlerFor("learner", pgNormalLearner, lg)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Run(context.Background(), Request{Scenario: "concurrent-duplicate", Script: raceScript, Custom: []*Handler{h}, Ledger: lg})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPostgresAttacks_NextLearnerSeesAFreshServer(t *testing.T) {
	fresh := testPostgresLedgers(t, 1)
	lg, _ := ParseLedger("postgres-rc", fresh)
	want := pgTraceBytes(t, lg)

	pg := testPostgresLedgers(t, 1) // one ledger: every run reuses its sessions
	lg, _ = ParseLedger("postgres-rc", pg)
	for _, parser := range []string{"parser-on", "parser-off"} {
		for _, a := range pgAttacks {
			t.Run(parser+"/"+a.name, func(t *testing.T) {
				off := parser == "parser-off"
				pgParserOff.Store(off)
				defer pgParserOff.Store(false)
				src := "@on credit\n" + a.sql + ";\n"
				h, err := ParseHandlerFor("attack", src, lg)
				if !off {
					if err == nil {
						t.Fatalf("the parser let it through")
					}
				} else {
					if err != nil {
						t.Fatalf("parser off, yet refused at parse time: %v", err)
					}
					tr, err := Run(context.Background(), Request{Scenario: "concurrent-duplicate", Script: raceScript, Custom: []*Handler{h}, Ledger: lg})
					if err != nil {
						t.Fatal(err)
					}
					var codes []string
					for _, st := range tr.Handlers[0].Steps {
						if st.Kind == StepSQL && strings.Contains(st.SQL, strings.Fields(a.sql)[1]) {
							codes = append(codes, pgSQLStateOf(st.Error))
						}
					}
					if len(codes) == 0 {
						t.Fatalf("the attack never ran: %+v", tr.Handlers[0].Steps)
					}
					for _, c := range codes {
						if c != a.off {
							t.Errorf("the privileges answered %q, want %q", c, a.off)
						}
					}
				}
				pgParserOff.Store(false)
				if got := pgTraceBytes(t, lg); !bytes.Equal(got, want) {
					t.Errorf("the next learner's trace differs from a fresh server's:\n got %s\nwant %s", got, want)
				}
			})
		}
	}
}

// Whatever a session was left with (settings, a search_path, LISTEN, a
// prepared statement, a temporary table made by someone who could), the
// next run on the pooled ledger sees a session as clean as a new one:
// release runs DISCARD ALL.
func TestPostgresLedger_ReleaseLeavesSessionsClean(t *testing.T) {
	fresh := testPostgresLedgers(t, 1)
	lg, _ := ParseLedger("postgres-rc", fresh)
	want := pgTraceBytes(t, lg)

	pg := testPostgresLedgers(t, 1)
	lg, _ = ParseLedger("postgres-rc", pg)
	pgTraceBytes(t, lg) // opens the workers' sessions
	pl := <-pg.free
	for _, sess := range pl.sessions {
		if err := execAll(context.Background(), sess.conn, "SET default_transaction_read_only = on; SET search_path = pg_catalog; SET statement_timeout = 1; LISTEN idemlab_workshop; PREPARE leftover AS SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	pg.free <- pl
	// A run releases the ledger, which resets the sessions; the run after
	// it meets them clean (the first run may meet the poisoned sessions:
	// nothing resets a session that a test poisoned behind the pool's back
	// until the run using it ends).
	pgTraceBytes(t, lg)
	if got := pgTraceBytes(t, lg); !bytes.Equal(got, want) {
		t.Errorf("after a run on poisoned sessions, the next differs from a fresh server's:\n got %s\nwant %s", got, want)
	}
}

// Advisory locks are namespaced per ledger: a learner holding the lock of
// a key on one ledger does not block the same key on another.
func TestPostgresLedger_AdvisoryLocksAreTheLedgers(t *testing.T) {
	pg := testPostgresLedgers(t, 2)
	one, two := pg.all[0], pg.all[1]
	ctx := context.Background()
	a, err := one.connect(ctx, "attacker")
	if err != nil {
		t.Fatal(err)
	}
	defer a.conn.Close(ctx)
	b, err := two.connect(ctx, "victim")
	if err != nil {
		t.Fatal(err)
	}
	defer b.conn.Close(ctx)
	if err := execAll(ctx, a.conn, "BEGIN; SELECT pg_advisory_xact_lock(hashtext('msg-1'))"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := execAll(ctx, b.conn, "SET lock_timeout = '500ms'; BEGIN; SELECT pg_advisory_xact_lock(hashtext('msg-1')); COMMIT"); err != nil {
		t.Fatalf("another ledger's lock of the same key: %v", err)
	}
	if d := time.Since(start); d > 400*time.Millisecond {
		t.Errorf("the other ledger waited %s", d)
	}
	// On its own ledger the key is the same lock.
	a2, err := one.connect(ctx, "same-ledger")
	if err != nil {
		t.Fatal(err)
	}
	defer a2.conn.Close(ctx)
	err = execAll(ctx, a2.conn, "SET lock_timeout = '100ms'; SELECT pg_advisory_xact_lock(hashtext('msg-1'))")
	if code := pgSQLState(err); code != "55P03" {
		t.Errorf("the same ledger's lock of the same key: %v, want a lock timeout (55P03)", err)
	}
}

// A role that owns something (a large object, written before the
// privileges were revoked, or by hand) does not keep a restart from
// starting: leftovers are dropped with DROP OWNED BY, then DROP ROLE.
func TestPostgresLedgers_RestartDropsWhatARoleOwns(t *testing.T) {
	url := pgtest.LedgerDatabase(t)
	var b [4]byte
	rand.Read(b[:])
	prefix := "test_owns_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	pg, err := OpenPostgresLedgers(ctx, url, 1, prefix)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pgconn.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	role := pg.all[0].schema
	if err := execAll(ctx, admin, fmt.Sprintf("SELECT lo_from_bytea(0, 'leftover'); DO $$ BEGIN EXECUTE format('ALTER LARGE OBJECT %%s OWNER TO %s', (SELECT max(oid) FROM pg_largeobject_metadata)); END $$", role)); err != nil {
		t.Fatal(err)
	}
	pg.crash()
	again, err := OpenPostgresLedgers(ctx, url, 1, prefix)
	if err != nil {
		t.Fatalf("restart after a role owned a large object: %v", err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
	if got := ledgerObjects(t, url, prefix); len(got) != 0 {
		t.Errorf("after Close: %v left", got)
	}
}

// Two learners at once, each on a ledger of the pool, running the race
// with a handler that takes an advisory lock on the message: each trace
// is byte-identical to the one a learner alone gets, run after run (the
// locks are the ledger's, so neither learner waits on the other).
func TestPostgresLedgers_ConcurrentLearnersGetTheSameTraces(t *testing.T) {
	pg := testPostgresLedgers(t, 2)
	lg, _ := ParseLedger("postgres-rc", pg)
	want := pgTraceBytes(t, lg)
	for round := range 5 {
		got := make(chan []byte, 2)
		for range 2 {
			go func() {
				h, err := ParseHandlerFor("learner", pgNormalLearner, lg)
				if err != nil {
					got <- []byte(err.Error())
					return
				}
				tr, err := Run(context.Background(), Request{Scenario: "concurrent-duplicate", Script: raceScript, Custom: []*Handler{h}, Ledger: lg})
				if err != nil {
					got <- []byte(err.Error())
					return
				}
				b, _ := json.Marshal(tr)
				got <- b
			}()
		}
		for range 2 {
			if b := <-got; !bytes.Equal(b, want) {
				t.Fatalf("round %d: a concurrent learner's trace differs from a lone learner's:\n got %s\nwant %s", round, b, want)
			}
		}
	}
}

// A statement that changes more rows than a session keeps notices for is
// cancelled, and says why; the next learner's run is unaffected.
func TestPostgresLedger_AStatementChangingTooManyRowsIsCancelled(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	lg, _ := ParseLedger("postgres-rc", pg)
	want := pgTraceBytes(t, lg)
	src := "@on credit\nINSERT INTO shipments(order_id, message_id, shipped_at) SELECT 'o', 'm', i FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000) SELECT i FROM n) x;\n"
	tr := runOnPostgres(t, pg, "postgres-rc", "lost-ack", "flood", src, "deliver msg-1")
	var msg string
	for _, st := range tr.Handlers[0].Steps {
		if st.Kind == StepSQL {
			msg = st.Error
		}
	}
	if !strings.Contains(msg, "more than 10000 rows") || !strings.Contains(msg, "54000") {
		t.Errorf("the flood's step: %q", msg)
	}
	if got := pgTraceBytes(t, lg); !bytes.Equal(got, want) {
		t.Errorf("the next learner's trace differs:\n got %s\nwant %s", got, want)
	}
}

// The race's waits cannot close a cycle (the waiting INSERT of the dedupe
// row holds nothing; so does an advisory lock taken first in a
// transaction): settle takes no deadlock check's wait for them, and the
// traces are the ones it gave with the wait.
func TestPostgresLedger_RaceTakesNoDeadlockSettle(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	lg, _ := ParseLedger("postgres-rc", pg)
	pgTraceBytes(t, lg) // the advisory lock's race
	before := pgSettleWaits.Load()
	tr := runOnPostgres(t, pg, "postgres-rc", "concurrent-duplicate", "dedupe-tx", "", raceScript)
	pgTraceBytes(t, lg)
	if n := pgSettleWaits.Load() - before; n != 0 {
		t.Errorf("%d deadlock settles in the races; want none", n)
	}
	var waited bool
	for _, st := range tr.Handlers[0].Steps {
		waited = waited || st.Kind == StepBlocked
	}
	if !waited {
		t.Error("dedupe-tx's race had no wait")
	}
}
