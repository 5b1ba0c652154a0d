package playground

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// walReference is the real thing the engine is compared with: a database
// file in WAL mode on the test's temporary directory, built with DDL and
// INSERTs (not from the engine's template image), one plain connection per
// worker, on the same driver.
type walReference struct {
	t     *testing.T
	path  string
	conns map[string]driver.Conn
}

func newWALReference(t *testing.T, sc *Scenario) *walReference {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ref.db")
	c, err := sqliteDriver.Open("file:" + path + "?_pragma=journal_mode(wal)")
	if err != nil {
		t.Fatal(err)
	}
	var init strings.Builder
	init.WriteString(schemaSQL)
	for _, a := range sc.Accounts {
		fmt.Fprintf(&init, "INSERT INTO accounts(id, balance) VALUES ('%s', %d);\n", a.ID, a.Balance)
	}
	for _, o := range sc.Orders {
		fmt.Fprintf(&init, "INSERT INTO orders(id, state) VALUES ('%s', '%s');\n", o.ID, o.State)
	}
	if err := execRaw(c, init.String()); err != nil {
		t.Fatal(err)
	}
	c.Close()
	return &walReference{t: t, path: path, conns: map[string]driver.Conn{}}
}

func (r *walReference) conn(name string) driver.Conn {
	if c, ok := r.conns[name]; ok {
		return c
	}
	c, err := sqliteDriver.Open("file:" + r.path + "?_pragma=busy_timeout(0)")
	if err != nil {
		r.t.Fatal(err)
	}
	r.conns[name] = c
	return c
}

func (r *walReference) close() {
	for _, c := range r.conns {
		c.Close()
	}
}

// run executes one statement and reports what SQLite answered: rows
// affected or found, and the error text.
func (r *walReference) run(worker, q string, args []Arg) (rows int64, errText string) {
	rows, err := r.exec(worker, q, args)
	if err != nil {
		return rows, err.Error()
	}
	return rows, ""
}

// exec executes one statement and returns the driver's own error, typed
// as the application would get it.
func (r *walReference) exec(worker, q string, args []Arg) (rows int64, err error) {
	c := r.conn(worker)
	nargs := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nargs[i] = driver.NamedValue{Name: a.Name, Ordinal: i + 1, Value: a.Value}
	}
	ctx := context.Background()
	if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(q)), "SELECT") {
		res, err := c.(driver.QueryerContext).QueryContext(ctx, q, nargs)
		if err != nil {
			return 0, err
		}
		defer res.Close()
		dest := make([]driver.Value, len(res.Columns()))
		for {
			if err := res.Next(dest); err != nil {
				if err != io.EOF {
					return rows, err
				}
				return rows, nil
			}
			rows++
		}
	}
	res, err := c.(driver.ExecerContext).ExecContext(ctx, q, nargs)
	if err != nil {
		return 0, err
	}
	rows, _ = res.RowsAffected()
	return rows, nil
}

// compare replays every statement of a handler's run, in the order the
// engine ran them and on the same worker's connection, and fails at the
// first statement whose outcome (rows, SQLITE_BUSY, error) differs; then
// it compares the committed rows.
func (r *walReference) compare(label string, ht *HandlerTrace) {
	r.t.Helper()
	for _, st := range ht.Steps {
		if st.SQL == "" || st.Kind == StepProvider || st.Kind == StepEmail {
			continue // not SQL: a call outside the database
		}
		rows, errText := r.run(st.Worker, st.SQL, st.Args)
		if errText != st.Error {
			r.t.Fatalf("%s: step %d (%s %s: %s): engine error %q, WAL file %q", label, st.Index, st.Kind, st.Worker, st.SQL, st.Error, errText)
		}
		var engineRows *int64
		switch {
		case st.RowsAffected != nil:
			engineRows = st.RowsAffected
		case st.RowsFound != nil:
			engineRows = st.RowsFound
		}
		if errText == "" && engineRows != nil && *engineRows != rows {
			r.t.Fatalf("%s: step %d (%s: %s): engine %d rows, WAL file %d", label, st.Index, st.Worker, st.SQL, *engineRows, rows)
		}
	}
	for _, c := range r.conns {
		execRaw(c, "ROLLBACK") // what a worker left open ("no transaction is active" is fine)
	}
	got, err := readTables(r.conn("reader"))
	if err != nil {
		r.t.Fatal(err)
	}
	for _, tr := range ht.Ledger {
		if _, sql := tableColumns[tr.Table]; !sql {
			continue // an outside system's records (provider.go)
		}
		var want [][]any
		for _, row := range tr.Rows {
			want = append(want, row.Values)
		}
		var have [][]any
		ids := make([]int64, 0, len(got[tr.Table]))
		for id := range got[tr.Table] {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			have = append(have, got[tr.Table][id])
		}
		if !reflect.DeepEqual(want, have) {
			r.t.Fatalf("%s: committed %s differ: engine %v, WAL file %v", label, tr.Table, want, have)
		}
	}
}

// randomHandlerSource builds a credit handler from statements that read,
// write, conflict and guard, in and out of transactions of every kind.
func randomHandlerSource(rng *rand.Rand) string {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	stmt := func() string {
		switch rng.IntN(7) {
		case 0:
			return "SELECT 1 FROM processed_messages WHERE message_id = :message_id;" + pick("", "\n@stop-if-found")
		case 1:
			return "SELECT balance FROM accounts WHERE id = :account_id;"
		case 2:
			return "INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now) ON CONFLICT DO NOTHING;" + pick("", "\n@stop-if-no-rows")
		case 3:
			return "INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);"
		case 4:
			return "DELETE FROM processed_messages WHERE processed_at < :now - 10;"
		default:
			return "UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;" + pick("", "", "\n@stop-if-no-rows")
		}
	}
	var b strings.Builder
	b.WriteString("@on credit\n")
	for seg := 0; seg < 1+rng.IntN(3); seg++ {
		if rng.IntN(3) == 0 {
			b.WriteString(stmt() + "\n")
			continue
		}
		b.WriteString(pick("BEGIN;", "BEGIN IMMEDIATE;", "BEGIN DEFERRED;", "BEGIN EXCLUSIVE;") + "\n")
		for k := 0; k < 1+rng.IntN(3); k++ {
			b.WriteString(stmt() + "\n")
		}
		b.WriteString(pick("COMMIT;", "COMMIT;", "END;", "ROLLBACK;") + "\n")
	}
	return b.String()
}

// randomInterleaving is a script that runs several copies statement by
// statement in a random order, with crashes, expiries and prunes.
func randomInterleaving(rng *rand.Rand, sc *Scenario) string {
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	var ids []string
	for _, m := range sc.Messages {
		ids = append(ids, m.ID)
	}
	var events []string
	for e := 0; e < 6+rng.IntN(14); e++ {
		m, w := pick(ids), pick(sc.Workers)
		switch rng.IntN(14) {
		case 0, 1, 2:
			events = append(events, "start "+m+" on "+w)
		case 3, 4, 5, 6:
			events = append(events, "step "+w+" "+strconv.Itoa(1+rng.IntN(2)))
		case 7:
			events = append(events, "finish "+w)
		case 8:
			events = append(events, "crash "+w)
		case 9:
			events = append(events, "deliver "+m+" to "+w+pick([]string{"", " lose-ack", " crash-after 2"}))
		case 10:
			events = append(events, "publish "+m+" to "+w)
		case 11:
			events = append(events, "expire "+m)
		case 12:
			events = append(events, pick([]string{"prune older-than 0", "advance 5"}))
		case 13:
			events = append(events, "redeliver "+m)
		}
	}
	return strings.Join(events, "; ")
}

// readThenWriteSource is a credit handler whose transaction reads before
// it writes (deferred, so its write cannot wait for the lock).
func readThenWriteSource(rng *rand.Rand) string {
	reads := []string{
		"SELECT 1 FROM processed_messages WHERE message_id = :message_id;\n@stop-if-found",
		"SELECT balance FROM accounts WHERE id = :account_id;",
	}
	writes := []string{
		"INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now) ON CONFLICT DO NOTHING;\n@stop-if-no-rows",
		"UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;",
	}
	var b strings.Builder
	b.WriteString("@on credit\nBEGIN;\n" + reads[rng.IntN(len(reads))] + "\n")
	for k := 0; k < 1+rng.IntN(2); k++ {
		b.WriteString(writes[rng.IntN(len(writes))] + "\n")
	}
	b.WriteString("COMMIT;\n")
	return b.String()
}

// randomConflict starts msg-1 on A and on B and steps them through each
// other at random, then finishes both.
func randomConflict(rng *rand.Rand) string {
	events := []string{"start msg-1 on A", "start msg-1 on B"}
	for k := 0; k < 3+rng.IntN(6); k++ {
		events = append(events, fmt.Sprintf("step %s %d", []string{"A", "B"}[rng.IntN(2)], 1+rng.IntN(2)))
	}
	if rng.IntN(2) == 0 {
		events = append(events, "finish A", "finish B")
	} else {
		events = append(events, "finish B", "finish A")
	}
	return strings.Join(events, "; ")
}

// TestLocking_DifferentialAgainstWALFiles runs random interleavings of the
// built-in handlers and of random handlers through the engine, then runs the
// same statements, in the same order, on the same workers' connections, on
// a real WAL-mode database file: every statement's outcome (rows,
// SQLITE_BUSY, SQLITE_BUSY_SNAPSHOT, constraint errors) and the committed
// rows must match; so must the retries @retry-on makes after them.
// IDEMLAB_DIFFERENTIAL=N runs N cases (and N/3 conflict cases).
func TestLocking_DifferentialAgainstWALFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	n := 300
	if testing.Short() {
		n = 60
	}
	if v, err := strconv.Atoi(os.Getenv("IDEMLAB_DIFFERENTIAL")); err == nil {
		n = v
	}
	scenarios := []string{"concurrent-duplicate", "lost-ack", "webhook-retry", "lease-expiry"}
	busy, snapshot, retries := 0, 0, 0
	reused := ledgersReused.Load() // the cases run on pooled ledgers (pool.go), most of them reused
	defer func() {
		if r := ledgersReused.Load() - reused; r < int64(n)/2 {
			t.Errorf("%d of %d cases ran on a reused ledger: the differential test must cover reuse", r, n)
		}
	}()
	// Then a third as many again, in which two workers step one message's
	// read-then-write transactions through each other: the schedules in
	// which SQLite answers SQLITE_BUSY or SQLITE_BUSY_SNAPSHOT to a
	// transaction that has read, and @retry-on retries it.
	conflicts := rand.New(rand.NewPCG(12, 13))
	for i := 0; i < n+n/3; i++ {
		sc, _ := LookupScenario(scenarios[i%len(scenarios)])
		req := Request{Scenario: sc.Name, Seed: int64(i % 3)}
		if i >= n {
			sc, _ = LookupScenario("concurrent-duplicate")
			req.Scenario, req.Script = sc.Name, randomConflict(conflicts)
			src := []string{"", "@retry-on busy\n", "@retry-on conflict\n"}[i%3] + readThenWriteSource(conflicts)
			h, err := ParseHandler("random", src)
			if err != nil {
				t.Fatalf("random handler does not parse: %v\n%s", err, src)
			}
			req.Custom = []*Handler{h}
		} else if req.Script = randomInterleaving(rng, sc); i%2 == 0 {
			req.Handlers = []string{builtinOrder[rng.IntN(len(builtinOrder))]}
		} else {
			// Every third random handler retries on busy, every third
			// on conflict (a directive chosen without the generator, so
			// that the cases stay those the test has always run).
			src := []string{"", "@retry-on busy\n", "@retry-on conflict\n"}[i/2%3] + randomHandlerSource(rng)
			h, err := ParseHandler("random", src)
			if err != nil {
				t.Fatalf("random handler does not parse: %v\n%s", err, src)
			}
			req.Custom = []*Handler{h}
		}
		tr, err := Run(context.Background(), req)
		if err != nil {
			t.Fatalf("%s %q: %v", sc.Name, req.Script, err)
		}
		ht := tr.Handlers[0]
		for _, st := range ht.Steps {
			if strings.HasPrefix(st.Error, "database is locked") {
				busy++
				if strings.Contains(st.Error, "(517)") {
					snapshot++
				}
			}
			if strings.HasPrefix(st.Note, "@retry-on") {
				retries++
			}
			if len(req.Handlers) > 0 && st.Kind == StepSQL && strings.HasPrefix(st.Error, "database is locked") {
				if _, declared := builtinHandlers[ht.Name].retriesOn(RetryBusy); !declared {
					t.Errorf("case %d: built-in %s meets %s in its handler without @retry-on busy", i, ht.Name, st.Error)
				}
			}
		}
		ref := newWALReference(t, sc)
		label := fmt.Sprintf("case %d, %s × %s, %q", i, sc.Name, ht.Name, req.Script)
		if len(req.Custom) > 0 {
			label += "\n" + req.Custom[0].Source
		}
		ref.compare(label, ht)
		ref.close()
	}
	if busy == 0 || (snapshot == 0 || retries == 0) && n >= 300 {
		t.Errorf("%d cases hit SQLITE_BUSY %d times, SQLITE_BUSY_SNAPSHOT %d times, retried %d times: the cases do not exercise locking", n, busy, snapshot, retries)
	}
}

// TestLocking_WALSemantics pins the behaviours lesson 6 explains, on
// hand-written schedules: a reader does not wait for a writer and sees the
// last committed value; BEGIN IMMEDIATE takes the write lock at once; a
// transaction that read before another's commit gets SQLITE_BUSY_SNAPSHOT,
// its handler fails and its transaction rolls back.
func TestLocking_WALSemantics(t *testing.T) {
	readThenWrite := "@on credit\nBEGIN;\nSELECT balance FROM accounts WHERE id = :account_id;\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n"
	immediate := "@on credit\nBEGIN IMMEDIATE;\nSELECT balance FROM accounts WHERE id = :account_id;\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n"
	autocommit := "@on credit\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\n"
	tests := []struct {
		name, src, script string
		// want: worker:kind pairs that must appear in this order
		want []string
	}{
		{"ReaderDoesNotWait", readThenWrite,
			"start msg-1 on A; step A 3; start msg-1 on B; step B 2",
			[]string{"A:sql", "B:sql"}},
		{"StaleSnapshotRollsBack", readThenWrite,
			"start msg-1 on A; step A 2; start msg-1 on B; finish B; step A",
			[]string{"B:ack", "A:sql", "A:abort", "A:rollback"}},
		{"ImmediateTakesTheLockAtOnce", immediate,
			"start msg-1 on A; step A; start msg-1 on B; step B",
			[]string{"A:sql", "B:blocked"}},
		{"AutocommitWriterWaits", autocommit,
			"start msg-1 on A; start msg-1 on B; step A; step B",
			[]string{"A:sql", "B:sql"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHandler("probe", tt.src)
			if err != nil {
				t.Fatal(err)
			}
			sc, _ := LookupScenario("concurrent-duplicate")
			tr, err := Run(context.Background(), Request{Scenario: sc.Name, Custom: []*Handler{h}, Script: tt.script})
			if err != nil {
				t.Fatal(err)
			}
			ht := tr.Handlers[0]
			var seen []string
			for _, st := range ht.Steps {
				seen = append(seen, st.Worker+":"+st.Kind)
			}
			k := 0
			for _, s := range seen {
				if k < len(tt.want) && s == tt.want[k] {
					k++
				}
			}
			if k < len(tt.want) {
				t.Errorf("steps %v do not contain %v in order", seen, tt.want)
			}
			ref := newWALReference(t, sc)
			defer ref.close()
			ref.compare(tt.name, ht)
		})
	}
}
