package playground

import (
	"strings"
	"testing"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The allow-list on PostgreSQL is PostgreSQL's parser: what the lexical
// scan it replaces missed (a "--" in a quoted name, a comma join, a
// subquery, a WITH query, SELECT INTO) is refused with what and where.
func TestPgAllowList_RefusesWhatTheScanMissed(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{`SELECT 1 AS "--", set_config('default_transaction_read_only','on',false) FROM accounts`, "set_config(…) is not allowed|(line 1, column 19 "},
		{`SELECT id, balance, 1 AS "--" INTO TEMP TABLE accounts FROM accounts`, "SELECT … INTO is not allowed"},
		{`SELECT 1 AS "--", lo_from_bytea(0, 'x') FROM accounts`, "lo_from_bytea(…) is not allowed"},
		{`SELECT version()`, "version(…) is not allowed"},
		{`SELECT pg_notify('idemlab_workshop', 'x')`, "pg_notify(…) is not allowed"},
		{`SELECT pg_advisory_lock(1)`, "pg_advisory_lock(…) is not allowed"},
		{`SELECT pg_advisory_xact_lock(1, 2)`, "takes one key"},
		{`SELECT s.query FROM accounts a, pg_stat_activity s`, "pg_stat_activity is not a ledger table|(line 1, column 33 "},
		{"SELECT 1 FROM accounts\nWHERE id IN (SELECT usename FROM pg_user)", "pg_user is not a ledger table|(line 2, column 34 "},
		{`WITH x AS (SELECT * FROM pg_roles) SELECT * FROM x`, "pg_roles is not a ledger table"},
		{`SELECT * FROM (WITH pg_roles AS (SELECT 1) SELECT 1) s, pg_roles`, "pg_roles is not a ledger table"},
		{`SELECT * FROM accounts JOIN pg_catalog.pg_authid p ON true`, "pg_catalog.pg_authid is not a ledger table"},
		{`INSERT INTO public.accounts VALUES ('a', 1)`, "public.accounts is not a ledger table"},
		{`UPDATE accounts SET balance = 1 FROM pg_settings`, "pg_settings is not a ledger table"},
		{`DELETE FROM accounts USING pg_class`, "pg_class is not a ledger table"},
		{`SELECT xmin FROM accounts`, "xmin is a system column"},
		{`SELECT a.ctid FROM accounts a`, "ctid is a system column"},
		{`SELECT 'accounts'::regclass`, "a cast to regclass is not allowed"},
		{`SELECT current_user`, "CURRENT_USER, CURRENT_TIMESTAMP and the like"},
		{`SELECT * FROM generate_series(1, 10)`, "a function in FROM is not allowed"},
		{`SELECT count(*) OVER () FROM accounts`, "window function"},
		{`SELECT 1; SELECT 2`, "one statement at a time"},
		{`CREATE TABLE t (i int)`, "CREATE TABLE is not allowed"},
		{`COPY accounts TO STDOUT`, "COPY is not allowed"},
		{`DO $$ BEGIN END $$`, "DO is not allowed"},
		{`LISTEN idemlab_workshop`, "LISTEN is not allowed"},
		{`NOTIFY idemlab_workshop`, "NOTIFY is not allowed"},
		{`SET statement_timeout = 0`, "SET and RESET is not allowed"},
		{`RESET ALL`, "SET and RESET is not allowed"},
		{`LOCK accounts`, "LOCK is not allowed"},
		{`DISCARD ALL`, "DISCARD is not allowed"},
		{`SAVEPOINT a`, "only BEGIN, COMMIT and ROLLBACK"},
		{`BEGIN ISOLATION LEVEL SERIALIZABLE`, "write BEGIN, COMMIT or ROLLBACK alone"},
		{`SELECT 1 OPERATOR(pg_catalog.+) 1`, "the operator pg_catalog.+ is not allowed"},
		{`SELECT 'a' ~ 'b'`, "the operator ~ is not allowed"},
		{`SELECT pg_catalog.lower('A')`, "pg_catalog.lower(…) is not allowed"},
		{`SELECT FROM`, "PostgreSQL cannot read this"},
		{"SELECT 1 FROM accounts\x00; SELECT * FROM pg_authid", "a NUL byte is not allowed"},
		{"SELECT 1 FROM accounts WHERE id = '\xff'", "not valid UTF-8"},
	} {
		r := pgAllowList(tc.sql)
		if r == nil {
			t.Errorf("%s: allowed", tc.sql)
			continue
		}
		for _, want := range strings.Split(tc.want, "|") {
			if got := r.at(0).Error(); !strings.Contains(got, want) {
				t.Errorf("%s:\n got %s\nwant %s", tc.sql, got, want)
			}
		}
	}
}

// Every built-in handler's SQL, and what a learner writes, passes.
func TestPgAllowList_AllowsHandlerSQL(t *testing.T) {
	for _, q := range []string{
		"SELECT 1 FROM processed_messages WHERE message_id = $1 FOR UPDATE",
		"SELECT 1 FROM processed_messages p WHERE p.message_id = $1 FOR UPDATE OF p",
		"INSERT INTO processed_messages(message_id, processed_at) VALUES ($1, $2) ON CONFLICT (message_id) DO UPDATE SET processed_at = excluded.processed_at RETURNING message_id",
		"SELECT pg_advisory_xact_lock(hashtext($1))",
		"WITH d AS (SELECT message_id FROM processed_messages WHERE processed_at < $1) DELETE FROM processed_messages WHERE message_id IN (SELECT message_id FROM d)",
		"UPDATE accounts SET balance = balance + $1::bigint WHERE id = $2 AND NOT EXISTS (SELECT 1 FROM processed_messages WHERE message_id = $3)",
		"SELECT coalesce(max(version), 0) FROM prices WHERE sku LIKE 'a%' AND price BETWEEN 1 AND 10 ORDER BY 1",
		"INSERT INTO consumer_offsets(partition_id, next_offset) VALUES ('p', 1)",
		"SELECT CASE WHEN balance > 0 THEN 'yes' ELSE 'no' END, greatest(1, 2), nullif(1, 1) FROM accounts",
		"BEGIN", "COMMIT", "END", "ROLLBACK", "BEGIN WORK", "COMMIT TRANSACTION",
	} {
		if r := pgAllowList(q); r != nil {
			t.Errorf("%s: %v", q, r.at(0))
		}
	}
	for _, h := range builtinHandlers {
		h = Ledger{Postgres: &PostgresLedgers{}}.forLedger(h)
		for _, kind := range h.Kinds() {
			for _, st := range h.sections[kind] {
				if st.Call == nil {
					if err := pgCheckSQL(st); err != nil {
						t.Errorf("built-in %s: %s: %v", h.Name, st.SQL, err)
					}
				}
			}
		}
	}
}

// A statement's text is parsed once: a click runs its handler's
// statements without parsing them again.
func TestPgPlanOf_ParsesOnce(t *testing.T) {
	q := "SELECT balance FROM accounts WHERE id = :account_id -- TestPgPlanOf_ParsesOnce"
	pgParserWarm()
	before := pgParses.Load()
	first := pgPlanOf(q)
	for range 10 {
		if p := pgPlanOf(q); p != first {
			t.Fatal("a second plan for the same text")
		}
	}
	if n := pgParses.Load() - before; n != 1 {
		t.Errorf("%d parses for one text; want 1", n)
	}
	if first.sql != "SELECT balance FROM accounts WHERE id = $1          -- TestPgPlanOf_ParsesOnce" || len(first.names) != 1 {
		t.Errorf("plan %q %q", first.sql, first.names)
	}
}

// FuzzPgAllowList feeds handler text through PostgreSQL's parser and the
// allow-list: what gets through is one statement of an allowed kind,
// whose every relation is a ledger table (or a WITH query of its own) and
// whose every function is on the list. The check below walks the tree on
// its own, by field, not by the allow-list's code.
func FuzzPgAllowList(f *testing.F) {
	for _, s := range []string{
		`SELECT 1 AS "--", set_config('a','b',false) FROM accounts`,
		`SELECT * FROM accounts a, pg_stat_activity s`,
		`WITH x AS (SELECT 1) SELECT * FROM x, accounts`,
		`INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now) ON CONFLICT DO NOTHING`,
		`SELECT pg_advisory_xact_lock(hashtext(:message_id))`,
		`UPDATE accounts SET balance = balance + :amount WHERE id = :account_id`,
		`SELECT lower(id) FROM accounts WHERE id IN (SELECT order_id FROM shipments)`,
		"BEGIN", "COMMIT",
	} {
		f.Add(s)
	}
	// Started before the first input: the fuzzing engine takes a worker
	// whose input runs for seconds for a hung one.
	pgParserWarm()
	f.Fuzz(func(t *testing.T, q string) {
		p := pgPlanOf(q)
		if p.refusal != nil {
			return
		}
		tree, err := pgParse(p.sql)
		if err != nil || len(tree.Stmts) != 1 {
			t.Fatalf("allowed, yet %v, %d statements", err, len(tree.GetStmts()))
		}
		ctes := map[string]bool{}
		var rels, funcs []string
		var visit func(m protoreflect.Message)
		visit = func(m protoreflect.Message) {
			switch x := m.Interface().(type) {
			case *pg_query.CommonTableExpr:
				ctes[x.Ctename] = true
			case *pg_query.RangeVar:
				rels = append(rels, x.Schemaname+"."+x.Relname)
			case *pg_query.FuncCall:
				funcs = append(funcs, strings.Join(names(x.Funcname), "."))
			case *pg_query.IntoClause:
				t.Fatalf("allowed SELECT INTO: %q", q)
			case *pg_query.LockingClause:
				return // FOR UPDATE OF names FROM items; PostgreSQL refuses any other
			}
			m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
				if fd.IsList() && fd.Message() != nil {
					for i := 0; i < v.List().Len(); i++ {
						visit(v.List().Get(i).Message())
					}
				} else if fd.Message() != nil && !fd.IsMap() {
					visit(v.Message())
				}
				return true
			})
		}
		visit(tree.Stmts[0].ProtoReflect())
		for _, r := range rels {
			name := strings.TrimPrefix(r, ".")
			if !contains(tableOrder, name) && (!ctes[name] || strings.HasPrefix(name, "pg_") || strings.Contains(name, ".")) {
				t.Fatalf("allowed relation %s in %q", r, q)
			}
		}
		for _, fn := range funcs {
			if !contains(pgFunctions, fn) {
				t.Fatalf("allowed function %s in %q", fn, q)
			}
		}
	})
}

// BenchmarkPgAllowList: PostgreSQL's parser and the allow-list on a
// handler statement not parsed before (a click parses nothing: pgPlanOf
// keeps each text's plan). init-ms is the parser's start, once per
// process, when this benchmark is the first to parse.
func BenchmarkPgAllowList(b *testing.B) {
	start := time.Now()
	pgParserWarm()
	init := time.Since(start)
	const q = "INSERT INTO processed_messages(message_id, processed_at) VALUES ($1, $2) ON CONFLICT (message_id) DO NOTHING"
	b.ResetTimer()
	for b.Loop() {
		if r := pgAllowList(q); r != nil {
			b.Fatal(r.at(0))
		}
	}
	b.ReportMetric(float64(init.Microseconds())/1e3, "init-ms")
}

// Which statements hold nothing while they wait, and which lock nothing:
// what lets settle skip the deadlock check's wait.
func TestPgLockTraits(t *testing.T) {
	for _, tc := range []struct {
		sql                   string
		readOnly, holdNothing bool
	}{
		{"SELECT 1 FROM processed_messages WHERE message_id = $1", true, false},
		{"SELECT 1 FROM processed_messages WHERE message_id = $1 FOR UPDATE", false, false},
		{"SELECT pg_advisory_xact_lock(hashtext($1))", false, true},
		{"INSERT INTO processed_messages(message_id, processed_at) VALUES ($1, $2) ON CONFLICT DO NOTHING", false, true},
		{"INSERT INTO processed_messages(message_id, processed_at) VALUES ($1, $2), ('b', 1)", false, false},
		{"INSERT INTO processed_messages(message_id, processed_at) SELECT $1, $2", false, false},
		{"INSERT INTO processed_messages(message_id, processed_at) VALUES ((SELECT max(message_id) FROM inbox), $2)", false, false},
		{"UPDATE accounts SET balance = balance + 1 WHERE id = $1", false, false},
		{"BEGIN", true, false},
		{"SELECT 1 FROM accounts WHERE id IN (SELECT order_id FROM shipments)", false, false},
	} {
		tree, err := pgParse(tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		ro, hn := pgLockTraits(tree.Stmts[0].Stmt)
		if ro != tc.readOnly || hn != tc.holdNothing {
			t.Errorf("%s: readOnly %v, waitsHoldingNothing %v; want %v, %v", tc.sql, ro, hn, tc.readOnly, tc.holdNothing)
		}
	}
}
