package playground

import (
	"context"
	"database/sql/driver"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// sandboxTestConn opens a ledger of the lost-ack scenario, confines a worker
// connection and returns it with a second, unrelated memdb holding a secret.
func sandboxTestConn(t *testing.T) (*dbConn, string) {
	t.Helper()
	l, _ := openScenarioLedger(t, "lost-ack")
	t.Cleanup(l.close)
	secretURI := memdbURI("secret")
	other, err := sqliteDriver.Open(secretURI)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	if err := execRaw(other, "CREATE TABLE secret(x); INSERT INTO secret VALUES ('hidden')"); err != nil {
		t.Fatal(err)
	}
	s := &sim{l: l, workers: []*worker{{name: "A"}}}
	if err := sandboxWorkers(s); err != nil {
		t.Fatal(err)
	}
	return s.workers[0].db, secretURI
}

func TestSandbox_AllowsLedgerSQL(t *testing.T) {
	db, _ := sandboxTestConn(t)
	ctx := context.Background()
	for _, q := range []string{
		"BEGIN",
		"INSERT INTO processed_messages(message_id, processed_at) VALUES ('m', 1) ON CONFLICT DO NOTHING",
		"UPDATE accounts SET balance = balance + 10 WHERE id = 'acc-1'",
		"COMMIT",
		"SELECT count(*), max(balance) FROM accounts",
		"DELETE FROM processed_messages WHERE processed_at < 0",
	} {
		res := db.exec(ctx, q, nil, strings.HasPrefix(q, "SELECT"))
		if res.Err != nil {
			t.Errorf("%s: %v", q, res.Err)
		}
	}
}

// TestSandbox_RefusesHostileSQL runs the hostile catalogue directly on a
// confined connection, below the handler parser: the sandbox alone must
// refuse each within 100 ms and leave no file behind.
func TestSandbox_RefusesHostileSQL(t *testing.T) {
	db, secret := sandboxTestConn(t)
	dir := t.TempDir()
	ctx := context.Background()
	hostile := []struct{ name, sql string }{
		{"read another ledger", "ATTACH '" + secret + "' AS s"},
		{"attach a file", "ATTACH '" + filepath.Join(dir, "x.db") + "' AS x"},
		{"vacuum into a file", "VACUUM INTO '" + filepath.Join(dir, "y.db") + "'"},
		{"writable schema", "PRAGMA writable_schema = ON"},
		{"pragma function", "SELECT * FROM pragma_database_list"},
		{"journal to disk", "PRAGMA journal_mode = DELETE"},
		{"load an extension", "SELECT load_extension('/tmp/evil')"},
		{"create a trigger", "CREATE TRIGGER t AFTER UPDATE ON accounts BEGIN UPDATE accounts SET balance = balance + 1; END"},
		{"create a table", "CREATE TABLE t(x)"},
		{"drop a table", "DROP TABLE accounts"},
		{"write the schema", "DELETE FROM sqlite_master"},
		{"huge zeroblob", "SELECT zeroblob(2000000000)"},
		{"huge randomblob", "SELECT length(randomblob(100000000))"},
		{"runaway recursive CTE", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"},
		{"runaway cross join", "SELECT count(*) FROM accounts a, processed_messages p1, processed_messages p2, processed_messages p3, processed_messages p4, processed_messages p5, processed_messages p6"},
		{"temp schema", "INSERT INTO temp.accounts VALUES ('x', 1)"},
	}
	// Seed rows so that the cross join has something to multiply.
	for i := 0; i < 40; i++ {
		q := "INSERT INTO processed_messages(message_id, processed_at) VALUES ('seed-" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "', 0)"
		if res := db.exec(ctx, q, nil, false); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	for _, h := range hostile {
		var res execResult
		took, _ := cpuAndWall(func() {
			res = db.exec(ctx, h.sql, nil, strings.HasPrefix(h.sql, "SELECT") || strings.HasPrefix(h.sql, "WITH"))
		})
		t.Logf("%-24s %6.1f ms CPU  %v", h.name, float64(took.Microseconds())/1000, res.Err)
		if res.Err == nil {
			t.Errorf("%s: allowed", h.name)
			continue
		}
		// SQLite refuses a few of these itself, before the sandbox is asked.
		if !strings.HasPrefix(res.Err.Error(), sandboxRefused) && !strings.Contains(res.Err.Error(), "may not be modified") && !strings.Contains(res.Err.Error(), "no such table: temp.") {
			t.Errorf("%s: error %q does not start with %q", h.name, res.Err, sandboxRefused)
		}
		if took > 100*time.Millisecond && !raceDetector {
			t.Errorf("%s: refused after %v of CPU time, want under 100 ms", h.name, took)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("files appeared: %v", ents)
	}
}

func TestSandbox_PageCapStopsAGrowingLedger(t *testing.T) {
	db, _ := sandboxTestConn(t)
	ctx := context.Background()
	if res := db.exec(ctx, "INSERT INTO processed_messages VALUES ('x', 0)", nil, false); res.Err != nil {
		t.Fatal(res.Err)
	}
	// Each round doubles the rows and lengthens ids; the cap must stop it
	// long before memory is at risk.
	var err error
	for i := 0; i < 40 && err == nil; i++ {
		err = db.exec(ctx, "INSERT INTO processed_messages SELECT message_id || '.' || (SELECT count(*) FROM processed_messages), processed_at + 1 FROM processed_messages", nil, false).Err
	}
	if err == nil || !strings.HasPrefix(err.Error(), sandboxRefused) {
		t.Fatalf("growth not refused: %v", err)
	}
}

var _ driver.ExecerContext = (*sandboxConn)(nil)

// hostileHandlers are learner handlers that try to escape or exhaust the
// sandbox, with the line each must be refused on. Some are refused by the
// parser, some by SQLite at run time; all within 100 ms.
func hostileHandlers(dir string) []struct{ name, source string } {
	// Rows and their ids double in number and length with each statement.
	doubling := "@on credit\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\n" +
		strings.Repeat("INSERT INTO processed_messages SELECT message_id || upper(message_id) || (SELECT count(*) FROM processed_messages), :now FROM processed_messages;\n", 20)
	crossJoin := "@on credit\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\n" +
		strings.Repeat("INSERT INTO processed_messages SELECT message_id || '.' || (SELECT count(*) FROM processed_messages), :now FROM processed_messages;\n", 8) +
		"SELECT count(*) FROM processed_messages a, processed_messages b, processed_messages c, processed_messages d;\n"
	return []struct{ name, source string }{
		{"read another ledger", "@on credit\nATTACH 'file:/idemlab-ledger-1?vfs=memdb' AS other;\n"},
		{"attach a file", "@on credit\nATTACH '" + filepath.Join(dir, "x.db") + "' AS x;\n"},
		{"vacuum into a file", "@on credit\nVACUUM INTO '" + filepath.Join(dir, "y.db") + "';\n"},
		{"select from an attached schema", "@on credit\nSELECT * FROM other.accounts;\n"},
		{"runaway recursive CTE", "@on credit\nSELECT (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c);\n"},
		{"huge blob", "@on credit\nSELECT length(zeroblob(2000000000));\n"},
		{"load an extension", "@on credit\nSELECT load_extension('/tmp/evil.so');\n"},
		{"recursive trigger", "@on credit\nCREATE TRIGGER t AFTER UPDATE ON accounts BEGIN UPDATE accounts SET balance = balance + 1; END;\n"},
		{"writable schema", "@on credit\nPRAGMA writable_schema = ON;\n"},
		{"write sqlite_master", "@on credit\nDELETE FROM sqlite_master;\n"},
		{"ledger bomb", doubling},
		{"runaway cross join", crossJoin},
	}
}

// TestSandbox_RefusesHostileHandlers checks each hostile handler as a
// learner would submit it, while other learners' runs and checks go on.
func TestSandbox_RefusesHostileHandlers(t *testing.T) {
	dir := t.TempDir()
	ex := exerciseByID(t, "dedupe-credit")
	// One worker, whole deliveries: the first delivery reaches the hostile
	// statement (with two copies at once, a duplicate's constraint failure
	// would be the counterexample first).
	ex.Bounds = ExploreBounds{Workers: 1, MaxEvents: 6, Crashes: 1, LostAcks: 1}
	ctx := context.Background()

	// Other learners: plain runs and a check, in a loop until the end.
	stop := make(chan struct{})
	done := make(chan error, 1)
	served := 0
	go func() {
		var err error
		for err == nil {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			var tr *Trace
			if tr, err = Run(ctx, Request{Scenario: "lost-ack"}); err == nil && len(tr.Handlers) != 2 {
				err = fmt.Errorf("run: %d handlers", len(tr.Handlers))
			}
			served++
		}
		done <- err
	}()

	for _, h := range hostileHandlers(dir) {
		// The machine is shared (2 cores, other test suites): the bound is
		// on the CPU time the check used; wall time only has to stay under
		// the sandbox's wall cap.
		var res *CheckResult
		var err error
		cpu, wall := cpuAndWall(func() { res, err = Check(ctx, ex, h.source) })
		if err != nil {
			t.Fatalf("%s: %v", h.name, err)
		}
		best := cpu
		t.Logf("%-30s %5.1f ms CPU %5.1f ms wall  %v", h.name, float64(cpu.Microseconds())/1000, float64(wall.Microseconds())/1000, res.Error)
		if wall > sandboxWallCap+100*time.Millisecond && !raceDetector {
			t.Errorf("%s: refused after %v of wall time", h.name, wall)
		}
		if res.Passed || res.Error == nil {
			t.Errorf("%s: not refused: %+v", h.name, res)
			continue
		}
		if res.Error.Line == 0 {
			t.Errorf("%s: the error has no line: %v", h.name, res.Error)
		}
		if best > 100*time.Millisecond && !raceDetector {
			t.Errorf("%s: refused after %v of CPU time, want under 100 ms", h.name, best)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Errorf("another learner's run failed meanwhile: %v", err)
	}
	if served == 0 {
		t.Errorf("no other run was served meanwhile")
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("files appeared: %v", ents)
	}
}

func TestParseHandler_CapsSizeAndStatements(t *testing.T) {
	long := "@on credit\n-- " + strings.Repeat("x", maxHandlerBytes) + "\nSELECT 1;\n"
	if _, err := ParseHandler("mine", long); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("oversized source: %v", err)
	}
	many := "@on credit\n" + strings.Repeat("SELECT 1 FROM accounts;\n", maxHandlerStmts+1)
	_, err := ParseHandler("mine", many)
	want := fmt.Sprintf("line %d", maxHandlerStmts+2)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("too many statements: %v, want an error on %s", err, want)
	}
}

// cpuAndWall runs f on a locked thread and returns the CPU time that
// thread used (wall time where the thread clock cannot be read) and the
// wall time.
func cpuAndWall(f func()) (cpu, wall time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clock, ok := threadClock()
	var before int64
	if ok {
		before, ok = clockNanos(clock)
	}
	start := time.Now()
	f()
	wall = time.Since(start)
	if after, ok2 := clockNanos(clock); ok && ok2 {
		return time.Duration(after - before), wall
	}
	return wall, wall
}

// TestRun_CustomHandlerIsSandboxed: the playground runs a learner's handler
// (Request.Custom) on sandboxed connections too.
func TestRun_CustomHandlerIsSandboxed(t *testing.T) {
	src := "@on credit\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\n" +
		strings.Repeat("INSERT INTO processed_messages SELECT message_id || '.' || (SELECT count(*) FROM processed_messages), :now FROM processed_messages;\n", 8) +
		"SELECT count(*) FROM processed_messages a, processed_messages b, processed_messages c, processed_messages d;\n"
	h, err := ParseHandler("mine", src)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Run(context.Background(), Request{Scenario: "lost-ack", Script: "deliver msg-1", Custom: []*Handler{h}})
	if err != nil {
		t.Fatal(err)
	}
	var refused bool
	for _, st := range tr.Handlers[0].Steps {
		if st.Kind == StepSQL && st.Line == 11 && strings.HasPrefix(st.Error, sandboxRefused) {
			refused = true
		}
	}
	if !refused {
		t.Errorf("the runaway statement on line 11 was not refused")
	}
}

// TestSandbox_RefusedAtRunTimeIsRefusedAtParseTime: one authorizer guards
// both walls. Each statement of the table is refused by the sandbox on a
// learner's worker connection, and the same statement in a handler is
// refused when the handler is parsed, naming its line.
func TestSandbox_RefusedAtRunTimeIsRefusedAtParseTime(t *testing.T) {
	db, secret := sandboxTestConn(t)
	ctx := context.Background()
	for _, q := range []string{
		"ATTACH '" + secret + "' AS s",
		"DETACH main",
		"PRAGMA journal_mode = DELETE",
		"PRAGMA writable_schema = ON",
		"CREATE TABLE t(x)",
		"CREATE TEMP TABLE t(x)",
		"CREATE TRIGGER t AFTER INSERT ON accounts BEGIN DELETE FROM accounts; END",
		"CREATE VIEW v AS SELECT 1",
		"CREATE INDEX i ON accounts(balance)",
		"DROP TABLE accounts",
		"ALTER TABLE accounts ADD COLUMN x",
		"VACUUM",
		"ANALYZE",
		"REINDEX",
		"SAVEPOINT a",
		"SELECT load_extension('/tmp/evil')",
		"SELECT zeroblob(10)",
		"SELECT randomblob(10) FROM accounts",
		"SELECT printf('%d', balance) FROM accounts",
		"SELECT sqlite_version()",
		"SELECT date('now')",
		"UPDATE accounts SET balance = unicode(id)",
		"SELECT * FROM pragma_database_list",
		"SELECT * FROM accounts WHERE balance > (SELECT count(*) FROM pragma_table_info('accounts'))",
		"SELECT * FROM sqlite_dbpage",
		"SELECT name FROM sqlite_master",
		"SELECT * FROM temp.sqlite_master",
		"SELECT (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c)",
		"UPDATE sqlite_dbpage SET data = NULL",
		"SELECT * FROM (WITH p AS (SELECT * FROM pragma_function_list) SELECT count(*) FROM p)",
	} {
		t.Run(q, func(t *testing.T) {
			res := db.exec(ctx, q, nil, strings.HasPrefix(q, "SELECT"))
			if res.Err == nil {
				t.Fatalf("the sandbox ran it")
			}
			if !strings.HasPrefix(res.Err.Error(), sandboxRefused) {
				t.Fatalf("refused, but not by the sandbox: %v", res.Err)
			}
			_, err := ParseHandler("mine", "-- a comment first\n"+q+";\n")
			if err == nil {
				t.Fatalf("the parser accepts it")
			}
			if !strings.Contains(err.Error(), "handler mine, line 2: ") {
				t.Errorf("the parse error does not name line 2: %v", err)
			}
		})
	}
}

func TestSandbox_TransactionControlIsNotMetered(t *testing.T) {
	for q, want := range map[string]bool{
		"BEGIN": true, "begin immediate": true, " COMMIT": true, "\nEND;": true, "ROLLBACK": true,
		"SELECT 1": false, "INSERT INTO accounts VALUES ('a', 1)": false, "UPDATE accounts SET balance = 0": false,
		"BEGINNING": false, "": false, "-- COMMIT\nDELETE FROM accounts": false,
	} {
		if got := sandboxTransactionControl(q); got != want {
			t.Errorf("sandboxTransactionControl(%q) = %v, want %v", q, got, want)
		}
	}

	// A COMMIT held to a limit it cannot meet still commits: a verdict
	// never depends on how loaded the machine is when a transaction ends.
	l, _ := openScenarioLedger(t, "lost-ack")
	defer l.close()
	c, err := l.sandboxedConn("A", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 200 {
		c.conn.(*sandboxConn).timeout = time.Hour
		for _, q := range []string{"BEGIN", fmt.Sprintf("INSERT INTO processed_messages VALUES ('m-%d', %d)", i, i)} {
			if res := c.exec(ctx, q, nil, false); res.Err != nil {
				t.Fatalf("%d: %s: %v", i, q, res.Err)
			}
		}
		c.conn.(*sandboxConn).timeout = time.Nanosecond
		end := "COMMIT"
		if i%2 == 1 {
			end = "ROLLBACK"
		}
		if res := c.exec(ctx, end, nil, false); res.Err != nil {
			t.Fatalf("%d: %s under a 1 ns limit: %v", i, end, res.Err)
		}
	}
	c.conn.(*sandboxConn).timeout = time.Hour
	res := c.exec(ctx, "SELECT 1 FROM processed_messages WHERE message_id >= 'm-' AND message_id < 'm.'", nil, true)
	if res.Err != nil || res.Found != 100 {
		t.Fatalf("committed rows: %d, %v; want the 100 committed", res.Found, res.Err)
	}
}

// The checker's connection is returned only when its schema and its
// authorizer are installed; otherwise the error is, and nothing is kept.
func TestOpenCheckerConn_SchemaErrorIsReturned(t *testing.T) {
	c, err := openCheckerConn("CREATE TABLE broken (", func(string) {})
	if err == nil {
		c.Close()
		t.Fatal("a schema that does not install gave a checker connection")
	}
	if !strings.Contains(err.Error(), "schema") {
		t.Errorf("error %q does not say the schema failed", err)
	}
	c, err = openCheckerConn(schemaSQL, func(string) {})
	if err != nil {
		t.Fatalf("the ledger's schema: %v", err)
	}
	c.Close()
}
