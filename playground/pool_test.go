package playground

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// dumpLedger is everything of a ledger's database a connection can observe,
// as text: the schema and its cookie, the journal mode, the page and free
// page counts, every row with its rowid, its values quoted and their
// storage classes, and the rowid the next insert into each table gets.
// rowsOnly leaves out what the sandbox does not let a learner's connection
// read (pragmas, the schema table, quote()).
func dumpLedger(t *testing.T, c driver.Conn, rowsOnly bool) string {
	t.Helper()
	var b strings.Builder
	query := func(q string) {
		rows, err := c.(driver.QueryerContext).QueryContext(context.Background(), q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		dest := make([]driver.Value, len(rows.Columns()))
		b.WriteString(q + "\n")
		for {
			if err := rows.Next(dest); err != nil {
				if err != io.EOF {
					t.Fatal(err)
				}
				return
			}
			for _, v := range dest {
				b.WriteString(" " + strings.TrimSpace(strings.ReplaceAll(string(mustJSON(t, v)), "\n", "")))
			}
			b.WriteByte('\n')
		}
	}
	if !rowsOnly {
		for _, p := range []string{"schema_version", "journal_mode", "page_count", "freelist_count", "user_version", "application_id"} {
			query("PRAGMA " + p)
		}
		query("SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master ORDER BY name")
	}
	for _, table := range tableOrder {
		var cols []string
		for _, col := range tableColumns[table] {
			if rowsOnly {
				cols = append(cols, col, "typeof("+col+")")
			} else {
				cols = append(cols, "quote("+col+")", "typeof("+col+")")
			}
		}
		query("SELECT rowid, " + strings.Join(cols, ", ") + " FROM " + table + " ORDER BY rowid")
		query("SELECT coalesce(max(rowid), 0) + 1 FROM " + table)
	}
	return b.String()
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// scribble changes a ledger as runs do, and worse: commits on several
// connections (rows added, changed and deleted, rowids used up), a prune,
// then leaves one connection inside a transaction that wrote and, on a
// sandboxed ledger (a learner's SQL), another holding a read snapshot the
// engine does not know of.
func scribble(t *testing.T, l *ledger, sandboxed bool, rng *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	conn := l.conn
	if sandboxed {
		conn = func(name string) (*dbConn, error) { return l.sandboxedConn(name, time.Second) }
	}
	a, err := conn("A")
	if err != nil {
		t.Fatal(err)
	}
	b, err := conn("B")
	if err != nil {
		t.Fatal(err)
	}
	janitor, err := l.janitorConn()
	if err != nil {
		t.Fatal(err)
	}
	run := func(c *dbConn, q string, query bool) {
		if res := c.exec(ctx, q, nil, query); res.Err != nil {
			t.Fatalf("%s: %v", q, res.Err)
		}
	}
	for i := range 1 + rng.IntN(4) {
		n := strconv.Itoa(rng.IntN(1000))
		run(a, "INSERT INTO shipments(order_id, message_id, shipped_at) VALUES ('o"+n+"', 'm"+n+"', "+n+")", false)
		run(b, "INSERT OR IGNORE INTO processed_messages VALUES ('m"+n+"', "+strconv.Itoa(i)+")", false)
	}
	run(a, "UPDATE accounts SET balance = balance + 7", false)
	run(b, "DELETE FROM orders WHERE rowid = (SELECT min(rowid) FROM orders)", false)
	run(b, "INSERT INTO accounts VALUES ('new-"+strconv.Itoa(rng.IntN(100))+"', 1.5)", false)
	run(janitor, "DELETE FROM processed_messages WHERE processed_at < 2", false)
	if rng.IntN(2) == 0 {
		run(a, "BEGIN", false)
		a.setInTransaction(true, false)
		run(a, "UPDATE accounts SET balance = 0", false)
	}
	if sandboxed && rng.IntN(2) == 0 {
		execRaw(b.conn, "BEGIN") // a transaction the engine does not know of
		run(b, "SELECT * FROM accounts", true)
	}
}

// A reset ledger is a fresh ledger in everything SQLite lets a connection
// observe, seen from every one of its connections, however it was used.
func TestLedgerPool_ResetIsFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 1))
	for _, sc := range Scenarios() {
		fresh, tmpl := openScenarioLedger(t, sc.Name)
		want, wantRows := dumpLedger(t, fresh.pinned.conn, false), dumpLedger(t, fresh.pinned.conn, true)
		fresh.close()
		// A ledger's mirror shares the template's rows until it changes
		// them (useRows): the template's must stay as they are.
		tmplRows := string(mustJSON(t, renderTables(tmpl.rows)))
		defer func() {
			if got := string(mustJSON(t, renderTables(tmpl.rows))); got != tmplRows {
				t.Errorf("%s: the template's rows changed:\n%s\nwant\n%s", sc.Name, got, tmplRows)
			}
		}()

		for _, sandboxed := range []bool{false, true} {
			l, err := openLedger(tmpl)
			if err != nil {
				t.Fatal(err)
			}
			l.key = poolKey{tmpl, sandboxed}
			for round := range 4 {
				scribble(t, l, sandboxed, rng)
				if err := l.resetRows(tmpl); err != nil {
					t.Fatalf("%s round %d: %v", sc.Name, round, err)
				}
				l.freeWorkers()
				for _, c := range append(l.conns, &dbConn{conn: l.keeper.conn}) {
					want := want
					_, confined := c.conn.(*sandboxConn)
					if confined {
						want = wantRows
					}
					if got := dumpLedger(t, c.conn, confined); got != want {
						t.Fatalf("%s (sandboxed %v) round %d: a reset ledger is not fresh\n got:\n%s\nwant:\n%s", sc.Name, sandboxed, round, got, want)
					}
				}
				if got := renderTables(l.committed); string(mustJSON(t, got)) != string(mustJSON(t, renderTables(tmpl.rows))) {
					t.Fatalf("%s: the mirror is not the template's", sc.Name)
				}
			}
			l.close()
		}
	}
}

// A ledger that a learner's handler grew past its template's pages is not
// reused: under the sandbox's page cap it would have a different room.
func TestLedgerPool_GrownLedgerIsNotReused(t *testing.T) {
	sc, _ := LookupScenario("lost-ack")
	tmpl, _ := sc.template()
	l, err := openLedger(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	c, _ := l.conn("A")
	if res := c.exec(context.Background(), "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 500) INSERT INTO shipments SELECT 'o', hex(randomblob(200)), x FROM n", nil, false); res.Err != nil {
		t.Fatal(res.Err)
	}
	if err := l.resetRows(tmpl); err != errNotFresh {
		t.Fatalf("reset of a grown ledger: %v, want errNotFresh", err)
	}
}

// runTraces runs every scenario's default script, and a mixed script, with
// its handlers, every built-in handler and a few learner handlers, and
// returns each run's trace as JSON by a name for the case.
type poolCase struct {
	name string
	req  Request
}

func poolCases(t *testing.T) []poolCase {
	t.Helper()
	var learners []*Handler
	raw, err := os.ReadFile("testdata/mutations.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var groups []mutationGroup
	if err := yaml.Unmarshal(raw, &groups); err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		for _, m := range append(g.Wrong[:min(2, len(g.Wrong))], g.Right[:min(1, len(g.Right))]...) {
			h, err := ParseHandler(m.Name, m.Source)
			if err != nil {
				t.Fatalf("%s: %v", m.Name, err)
			}
			learners = append(learners, h)
		}
	}
	var cases []poolCase
	rng := rand.New(rand.NewPCG(16, 2))
	for _, sc := range Scenarios() {
		scripts := []string{"", randomInterleaving(rng, sc)}
		for _, script := range scripts {
			for _, h := range builtinOrder {
				cases = append(cases, poolCase{sc.Name + "/" + h + "/" + script, Request{Scenario: sc.Name, Handlers: []string{h}, Script: script, Seed: 3}})
			}
			for _, h := range learners {
				cases = append(cases, poolCase{sc.Name + "/learner " + h.Name + "/" + script, Request{Scenario: sc.Name, Custom: []*Handler{h}, Script: script, Seed: 3}})
			}
		}
	}
	return cases
}

func traceJSON(t *testing.T, c poolCase) string {
	tr, err := Run(context.Background(), c.req)
	if err != nil {
		var ie *InputError
		if errors.As(err, &ie) {
			return "input error: " + err.Error()
		}
		t.Fatalf("%s: %v", c.name, err)
	}
	return string(mustJSON(t, tr))
}

// Every scenario × handler (built-in and learners') gives the same trace,
// byte for byte, on a fresh ledger and on reused ones, run thousands of
// times in random order so that each ledger is reused after every other
// kind of run.
func TestLedgerPool_TracesMatchFresh(t *testing.T) {
	cases := poolCases(t)
	poolOff.Store(true)
	want := make([]string, len(cases))
	for i, c := range cases {
		want[i] = traceJSON(t, c)
	}
	poolOff.Store(false)
	n := 3000
	if raceDetector || testing.Short() {
		n = 400
	}
	reused := ledgersReused.Load()
	rng := rand.New(rand.NewPCG(16, 3))
	for range n {
		i := rng.IntN(len(cases))
		if got := traceJSON(t, cases[i]); got != want[i] {
			t.Fatalf("%s: the trace on a reused ledger differs from a fresh ledger's\n got: %s\nwant: %s", cases[i].name, got, want[i])
		}
	}
	if r := ledgersReused.Load() - reused; r < int64(n)/2 {
		t.Errorf("only %d of %d runs reused a ledger", r, n)
	}
	if n := openLedgers.Load(); n != 0 {
		t.Errorf("%d ledgers still open", n)
	}
}

// The pool is bounded, and closes what stays idle: after a trim nothing
// is left, and no ledger file but the templates' stays in the directory.
func TestLedgerPool_BoundedAndTrimmed(t *testing.T) {
	sc, _ := LookupScenario("concurrent-duplicate")
	tmpl, _ := sc.template()
	var held []*ledger
	for range poolMaxPerKey + 5 {
		l, err := acquireLedger(tmpl, false)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	for _, l := range held {
		releaseLedger(l, true)
	}
	if n := len(ledgers.idle[poolKey{tmpl, false}]); n > poolMaxPerKey {
		t.Errorf("%d idle ledgers for one template, at most %d", n, poolMaxPerKey)
	}
	if n := ledgers.idleLedgers(); n > poolMaxIdle {
		t.Errorf("%d idle ledgers, at most %d", n, poolMaxIdle)
	}
	ledgers.trim(time.Now().Add(-time.Hour)) // none is that old: all stay
	if ledgers.idleLedgers() == 0 {
		t.Fatal("a trim closed ledgers that were not idle long")
	}
	ledgers.trim(time.Now().Add(time.Second))
	if n := ledgers.idleLedgers(); n != 0 {
		t.Errorf("%d ledgers left after trimming them all", n)
	}
	dir, _ := ledgerDir()
	files, _ := filepath.Glob(filepath.Join(dir, "ledger-*"))
	if len(files) > 0 && openLedgers.Load() == 0 {
		t.Errorf("ledger files left after the pool emptied: %v", files)
	}
	if n := openLedgers.Load(); n != 0 {
		t.Errorf("%d ledgers still open", n)
	}
}
