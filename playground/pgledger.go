package playground

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// PostgreSQL ledgers. A run's ledger is a schema on a PostgreSQL server
// instead of a SQLite file: the engine (engine.go, worker.go) is the same,
// and the seam is ledger.pg / dbConn.pg (ledger.go) — the Go mirror of the
// committed rows, the trace's changes and the verdicts are the ones the
// SQLite ledger feeds. What differs lives in these files:
//
//   - pgledger.go: the pool of schemas, each owned by a role of its own,
//     and its reset (DELETE + refill, a fraction of a millisecond);
//   - pgsession.go: the workers' sessions, each statement run
//     asynchronously so that a statement that waits on a lock is seen
//     waiting (pg_blocking_pids) while the scheduler runs the others;
//   - pgdialect.go: handler SQL on PostgreSQL (parameters, dialect errors
//     with hints, the built-in handlers' PostgreSQL variants).
//
// The code is in package playground, not a sub-package, because the seam
// is the engine's unexported connection type: a sub-package would need the
// engine to export its statement results and row changes for one caller.

// Isolation levels a PostgreSQL ledger runs its workers' transactions at.
const (
	IsolationReadCommitted  = "read committed"
	IsolationRepeatableRead = "repeatable read"
	IsolationSerializable   = "serializable"
)

// Ledger picks the database a run's ledgers live on. The zero value is
// SQLite, the default.
type Ledger struct {
	Postgres  *PostgresLedgers // nil: SQLite
	Isolation string           // with Postgres: one of the Isolation* levels
	// Parallel, with Postgres, is how many of the pool's ledgers a check
	// uses at once (0: its own choice, pgCheckParallel); a server sets it
	// to the ledgers its admission gave the check.
	Parallel int
}

// ledgerNames maps the names the CLI and the URL use to isolation levels.
var ledgerNames = []struct{ name, isolation string }{
	{"postgres-rc", IsolationReadCommitted},
	{"postgres-rr", IsolationRepeatableRead},
	{"postgres-serializable", IsolationSerializable},
}

// LedgerNames lists the names ParseLedger accepts, SQLite first.
func LedgerNames() []string {
	out := []string{"sqlite"}
	for _, n := range ledgerNames {
		out = append(out, n.name)
	}
	return out
}

// ParseLedger reads a ledger name ("sqlite", "postgres-rc", "postgres-rr",
// "postgres-serializable"); a PostgreSQL name needs pg, the server's
// PostgreSQL ledgers.
func ParseLedger(name string, pg *PostgresLedgers) (Ledger, error) {
	if name == "" || name == "sqlite" {
		return Ledger{}, nil
	}
	for _, n := range ledgerNames {
		if n.name == name {
			if pg == nil {
				return Ledger{}, &InputError{Field: "ledger", Msg: name + " needs a PostgreSQL server for ledgers, and none is configured (-ledger-database URL)"}
			}
			return Ledger{Postgres: pg, Isolation: n.isolation}, nil
		}
	}
	return Ledger{}, &InputError{Field: "ledger", Msg: fmt.Sprintf("unknown ledger %q; ledgers are %s", clip(name), strings.Join(LedgerNames(), ", "))}
}

// Name is the ledger's name as ParseLedger reads it.
func (lg Ledger) Name() string {
	for _, n := range ledgerNames {
		if lg.Postgres != nil && n.isolation == lg.Isolation {
			return n.name
		}
	}
	return "sqlite"
}

// PostgresLedgers is a bounded pool of ledger schemas on one PostgreSQL
// server. Each schema belongs to a login role of its own that may only
// read and write the ledger tables of that schema (tableOrder; not a
// superuser, no CREATE or TEMP anywhere, no other schema, none of the
// functions pgprivileges.go revokes), with statement_timeout,
// lock_timeout and idle_in_transaction_session_timeout set on the role,
// and a short deadlock_timeout so that PostgreSQL reports a deadlock
// (40P01) within milliseconds.
type PostgresLedgers struct {
	admin  *pgconn.Config
	prefix string
	owner  *pgconn.PgConn // holds the prefix's lock while the pool is open (pgprefix.go)
	free   chan *pgLedger
	all    []*pgLedger
	// cleaning counts the ledgers being reset after a run (release);
	// Close waits for them.
	cleaning sync.WaitGroup
}

// Timeouts set on every ledger role.
const (
	pgStatementTimeout = 2 * time.Second
	pgLockTimeout      = 3 * time.Second
	pgIdleInTxTimeout  = 10 * time.Second
	// pgDeadlockTimeout is how long a waiting statement waits before
	// PostgreSQL looks for a deadlock; pgDeadlockSettle is how long the
	// scheduler lets a statement it has just seen waiting run that check,
	// so that the check of an earlier waiter never races a later one's:
	// the transaction that closes a cycle is the one PostgreSQL aborts,
	// whatever the machine's load (see pgsession.go).
	pgDeadlockTimeout = 2 * time.Millisecond
	pgDeadlockSettle  = 8 * time.Millisecond
	// pgReleaseGrace is how long release lets a statement whose lock
	// holder has just rolled back end by itself before cancelling it.
	pgReleaseGrace = 20 * time.Millisecond
)

// OpenPostgresLedgers creates size ledger schemas, and a role for each, on
// the server at url, whose user must be a superuser (to set the short
// deadlock_timeout on the roles, and to revoke PUBLIC's defaults in the
// database: pgprivileges.go), and whose database should hold nothing but
// ledgers (the revocations apply to every other role in it). Names start with
// prefix (letters, digits and '_'), so that several servers can share a
// cluster; a prefix a live server holds is refused, and schemas left by a
// dead process with the same prefix are dropped first (pgprefix.go). Close
// drops them.
func OpenPostgresLedgers(ctx context.Context, url string, size int, prefix string) (*PostgresLedgers, error) {
	if size < 1 || size > 64 {
		return nil, fmt.Errorf("ledger pool: size %d; it must be 1 to 64", size)
	}
	if err := CheckLedgerPrefix(prefix); err != nil {
		return nil, fmt.Errorf("ledger pool: %w", err)
	}
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("ledger database: %w", err)
	}
	admin, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("ledger database: %w", err)
	}
	// PostgreSQL's parser holds the learners' SQL (pgparse.go): it starts
	// while the pool's schemas are made, and the pool is open once it has
	// started, so that no click waits for it, and nothing a run does
	// competes with its start for the CPU.
	go pgParserWarm()
	p := &PostgresLedgers{admin: cfg, prefix: strings.ToLower(prefix), free: make(chan *pgLedger, size), owner: admin}
	if err := claimPrefix(ctx, admin, p.prefix); err != nil {
		admin.Close(context.Background())
		return nil, err
	}
	if err := hardenLedgerDatabase(ctx, admin); err != nil {
		admin.Close(context.Background())
		return nil, err
	}
	for i := 1; i <= size; i++ {
		name := p.prefix + "_" + strconv.Itoa(i)
		var b [16]byte
		rand.Read(b[:])
		pl := &pgLedger{pool: p, schema: name, password: hex.EncodeToString(b[:]), sessions: map[string]*pgSession{}}
		if err := pl.create(ctx, admin); err != nil {
			p.Close()
			return nil, err
		}
		if err := pl.warm(ctx); err != nil {
			p.Close()
			return nil, err
		}
		p.all = append(p.all, pl)
		p.free <- pl
	}
	pgParserWarm()
	return p, nil
}

// Size is the number of ledgers in the pool: runs on PostgreSQL at once.
func (p *PostgresLedgers) Size() int { return len(p.all) }

// Close closes every session and drops the pool's schemas and roles.
func (p *PostgresLedgers) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	defer p.owner.Close(ctx) // last: the prefix is held until its schemas are gone
	p.cleaning.Wait()
	for _, pl := range p.all {
		pl.closeSessions()
	}
	admin, err := pgconn.ConnectConfig(ctx, p.admin)
	if err != nil {
		return err
	}
	defer admin.Close(ctx)
	for _, pl := range p.all {
		if err := execCatalog(ctx, admin, pl.dropSQL()); err != nil {
			return err
		}
	}
	p.all = nil
	return nil
}

// pgLedger is one schema of the pool, with its role's sessions (kept open
// between runs: a new connection costs more than a whole click).
type pgLedger struct {
	pool     *PostgresLedgers
	schema   string // also the role's name
	password string
	monitor  *pgSession            // resets the ledger and asks pg_blocking_pids
	sessions map[string]*pgSession // workers' sessions by worker name, and the janitor's

	// During a run.
	ctx       context.Context
	l         *ledger
	isolation string
	nextRowID map[string]int64 // table → rowid the next inserted row gets
	// tmpl is the run's template; clean, between runs, the template whose
	// rows the ledger holds already (reset at release), or nil.
	tmpl, clean *ledgerImage
	// holdsNothing, set by the checker for its runs (explore_pg.go), tells
	// a waiting session that no other session can ever wait on.
	holdsNothing func(*pgSession) bool
}

func execAll(ctx context.Context, c *pgconn.PgConn, sql string) error {
	_, err := c.Exec(ctx, sql).ReadAll()
	return err
}

// dropSQL drops the ledger's schema and role, and first whatever the role
// owns or was granted in this database (large objects a learner wrote
// included), which would otherwise keep DROP ROLE from running and a
// restart from starting.
func (pl *pgLedger) dropSQL() string {
	return fmt.Sprintf(`DO $$ BEGIN
	IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = '%[1]s') THEN
		EXECUTE 'DROP OWNED BY %[1]s CASCADE';
	END IF;
END $$;
DROP SCHEMA IF EXISTS %[1]s CASCADE; DROP ROLE IF EXISTS %[1]s;`, pl.schema)
}

// pgSchemaSQL is schemaSQL in PostgreSQL's types (bigint for ticks: an
// integer is 4 bytes there), with a trigger on every table that tells the
// session which rows a statement changed (a NOTICE: no write, no read, so
// no lock and no serialization conflict of its own).
var pgSchemaSQL = pgSchema()

// pgSchema translates schemaSQL's types (one list of tables for both
// databases) and adds the change trigger to every table of tableOrder.
func pgSchema() string {
	var b strings.Builder
	b.WriteString(strings.NewReplacer("TEXT", "text", "INTEGER", "bigint").Replace(schemaSQL))
	b.WriteString(`CREATE FUNCTION idemlab_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE NOTICE USING MESSAGE = 'idemlab-change', DETAIL = json_build_array(TG_TABLE_NAME, lower(TG_OP), to_jsonb(OLD), to_jsonb(NEW))::text;
	RETURN NULL;
END $$;
`)
	for _, t := range tableOrder {
		b.WriteString("CREATE TRIGGER idemlab_change AFTER INSERT OR UPDATE OR DELETE ON " + t + " FOR EACH ROW EXECUTE FUNCTION idemlab_change();\n")
	}
	return b.String()
}

// create makes the schema, its tables and its role.
func (pl *pgLedger) create(ctx context.Context, admin *pgconn.PgConn) error {
	s := pl.schema
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }
	sql := pl.dropSQL() + fmt.Sprintf(`
CREATE ROLE %[1]s LOGIN PASSWORD '%[2]s' NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS CONNECTION LIMIT %[3]d;
ALTER ROLE %[1]s SET search_path = %[1]s, pg_catalog;
ALTER ROLE %[1]s SET statement_timeout = '%[4]s';
ALTER ROLE %[1]s SET lock_timeout = '%[5]s';
ALTER ROLE %[1]s SET idle_in_transaction_session_timeout = '%[6]s';
CREATE SCHEMA %[1]s;
SET LOCAL search_path = %[1]s;
%[7]s
REVOKE ALL ON FUNCTION idemlab_change() FROM PUBLIC;
CREATE FUNCTION %[1]s.pg_advisory_xact_lock(key bigint) RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog
	AS 'SELECT pg_catalog.pg_advisory_xact_lock(%[9]d, pg_catalog.hashint8(key))';
REVOKE ALL ON FUNCTION %[1]s.pg_advisory_xact_lock(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION %[1]s.pg_advisory_xact_lock(bigint) TO %[1]s;
GRANT USAGE ON SCHEMA %[1]s TO %[1]s;
GRANT SELECT, INSERT, UPDATE, DELETE ON %[8]s TO %[1]s;
`, s, pl.password, MaxWorkers+3, ms(pgStatementTimeout), ms(pgLockTimeout), ms(pgIdleInTxTimeout), pgSchemaSQL, strings.Join(tableOrder, ", "), pl.lockNumber())
	if err := execCatalog(ctx, admin, "BEGIN;"+sql+"COMMIT;"); err != nil {
		return fmt.Errorf("ledger schema %s: %w", s, err)
	}
	// deadlock_timeout is a superuser's setting: without it, PostgreSQL
	// still detects deadlocks, after its default second.
	if err := execAll(ctx, admin, fmt.Sprintf("ALTER ROLE %s SET deadlock_timeout = '%s'", s, ms(pgDeadlockTimeout))); err != nil {
		return fmt.Errorf("ledger role %s: setting deadlock_timeout needs a superuser: %w", s, err)
	}
	return nil
}

// connect opens a session as the ledger's role.
func (pl *pgLedger) connect(ctx context.Context, name string) (*pgSession, error) {
	cfg := pl.pool.admin.Copy()
	cfg.User, cfg.Password = pl.schema, pl.password
	cfg.RuntimeParams = map[string]string{"application_name": "idemlab ledger " + name}
	sess := &pgSession{name: name, ledger: pl}
	cfg.OnNotice = sess.notice
	c, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("ledger session: %w", err)
	}
	sess.conn, sess.pid = c, c.PID()
	return sess, nil
}

// warm opens the monitor and the sessions of the workers most scenarios
// have, and has each read the ledger's tables once (a new session loads
// their definitions on first use), so that a first click pays for neither.
func (pl *pgLedger) warm(ctx context.Context) error {
	const touch = "SELECT 1 FROM accounts, orders, shipments, processed_messages LIMIT 0"
	m, err := pl.connect(ctx, "monitor")
	if err != nil {
		return err
	}
	pl.monitor = m
	for _, name := range []string{"A", "B"} {
		sess, err := pl.connect(ctx, name)
		if err != nil {
			return err
		}
		pl.sessions[name] = sess
	}
	for _, sess := range append([]*pgSession{pl.monitor}, pl.sessions["A"], pl.sessions["B"]) {
		if err := execAll(ctx, sess.conn, touch); err != nil {
			return fmt.Errorf("ledger session: %w", err)
		}
	}
	return nil
}

func (pl *pgLedger) closeSessions() {
	pl.clean = nil // what the rows hold is known again only after a reset
	for _, sess := range pl.sessions {
		sess.conn.Close(context.Background())
	}
	clear(pl.sessions)
	if pl.monitor != nil {
		pl.monitor.conn.Close(context.Background())
		pl.monitor = nil
	}
}

// acquire takes a free ledger (waiting for one until ctx ends), resets it to
// the template's rows and returns the run's mirror of it.
func (lg Ledger) acquire(ctx context.Context, tmpl *ledgerImage) (*ledger, error) {
	var pl *pgLedger
	select {
	case pl = <-lg.Postgres.free:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// The release of the run before reset the ledger to its template, off
	// the critical path: most runs on a ledger take the template the run
	// before took.
	if pl.clean != tmpl || pl.monitor == nil || pl.monitor.conn.IsClosed() {
		if err := pl.reset(ctx, tmpl); err != nil {
			pl.closeSessions() // a broken connection is not reused
			lg.Postgres.free <- pl
			return nil, err
		}
	}
	pl.clean, pl.tmpl = nil, tmpl
	pl.ctx, pl.isolation = ctx, lg.Isolation
	l := &ledger{committed: tmpl.rows.clone(), pg: pl}
	pl.l = l
	pl.nextRowID = map[string]int64{}
	for t, rows := range tmpl.rows {
		for id := range rows {
			pl.nextRowID[t] = max(pl.nextRowID[t], id+1)
		}
	}
	return l, nil
}

// release ends the run's use of the ledger: every statement still running
// is cancelled, every open transaction rolled back, and the ledger goes
// back to the pool. A session in a state it cannot be sure of is closed.
func (pl *pgLedger) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Sessions with no statement running first: rolling their
	// transactions back frees the locks the others wait on, so that those
	// end by themselves, without a cancel request (a connection each).
	for _, running := range []bool{false, true} {
		for _, name := range pl.sessionOrder() {
			sess := pl.sessions[name]
			if (sess.inflight != nil) != running {
				continue
			}
			if running {
				select {
				case <-sess.inflight.done:
				case <-time.After(pgReleaseGrace):
				}
			}
			if err := sess.abandon(ctx); err != nil {
				sess.conn.Close(ctx)
				delete(pl.sessions, name)
			}
		}
	}
	pl.l, pl.ctx = nil, nil
	// The sessions and the rows are reset in the background: the run's
	// answer does not wait for it, and the ledger goes back to the pool
	// once it is clean.
	pl.pool.cleaning.Add(1)
	go func() {
		defer pl.pool.cleaning.Done()
		pl.discard()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if pl.tmpl != nil && pl.reset(ctx, pl.tmpl) == nil {
			pl.clean = pl.tmpl
		}
		pl.tmpl = nil
		pl.pool.free <- pl
	}()
}

// pgSessionReset leaves a session as clean as a new one, in one round
// trip: DISCARD ALL's parts that a transaction block allows. DISCARD ALL
// itself would cost a round trip of its own, and it discards the cached
// plans of the change trigger, which hold nothing of a learner's; the
// advisory locks it would release are the session's, which a ledger role
// cannot take (pgprivileges.go).
const pgSessionReset = "SET SESSION AUTHORIZATION DEFAULT; RESET ALL; DEALLOCATE ALL; CLOSE ALL; UNLISTEN *; DISCARD TEMP; DISCARD SEQUENCES;"

// discard leaves every session that ran a learner's SQL as clean as a new
// one, whatever that SQL did to it (the parser refuses every way we know
// of; this holds with the parser off): settings back to the role's,
// temporary objects dropped, prepared statements and cursors gone, no
// channel listened to. A session that cannot be reset is closed. Sessions
// that ran only the engine's own handlers need nothing.
func (pl *pgLedger) discard() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, name := range pl.sessionOrder() {
		sess := pl.sessions[name]
		sess.notices = nil
		if !sess.dirty {
			continue
		}
		sql := pgSessionReset
		if sess.isolation != "" {
			// The level is set again now rather than at the next run's
			// first statement: most runs take the level the run before took.
			sql += " SET default_transaction_isolation = '" + sess.isolation + "';"
		}
		if sess.conn.IsClosed() || sess.conn.TxStatus() != 'I' || execAll(ctx, sess.conn, sql) != nil {
			sess.conn.Close(ctx)
			delete(pl.sessions, name)
			continue
		}
		sess.dirty = false
	}
}

// reset puts the ledger back to the template's rows in one round trip:
// DELETE + refill, a fraction of a millisecond (a fresh schema costs
// several milliseconds, TRUNCATE too).
func (pl *pgLedger) reset(ctx context.Context, tmpl *ledgerImage) error {
	if pl.monitor != nil && pl.monitor.conn.IsClosed() {
		pl.monitor = nil
	}
	if pl.monitor == nil {
		m, err := pl.connect(ctx, "monitor")
		if err != nil {
			return err
		}
		pl.monitor = m
	}
	var b strings.Builder // one query of many statements: one transaction
	for _, t := range tableOrder {
		b.WriteString(" DELETE FROM " + t + ";")
	}
	for _, t := range tableOrder {
		rows := tmpl.rows[t]
		ids := make([]int64, 0, len(rows))
		for id := range rows {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			fmt.Fprintf(&b, " INSERT INTO %s(%s) VALUES (", t, strings.Join(tableColumns[t], ", "))
			for i, v := range rows[id] {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(pgLiteral(v))
			}
			b.WriteString(");")
		}
	}
	pl.monitor.notices = nil
	err := execAll(ctx, pl.monitor.conn, b.String())
	pl.monitor.notices = nil
	if err != nil {
		return fmt.Errorf("ledger reset: %w", err)
	}
	return nil
}

// pgLiteral writes a template value (text, integer or null) as SQL.
func pgLiteral(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return "'" + strings.ReplaceAll(fmt.Sprint(v), "'", "''") + "'"
}

// conn returns a worker's session at the run's isolation level.
func (pl *pgLedger) conn(l *ledger, name string) (*dbConn, error) {
	for _, c := range l.conns {
		if c.name == name {
			return c, nil
		}
	}
	sess := pl.sessions[name]
	if sess != nil && sess.conn.IsClosed() {
		delete(pl.sessions, name)
		sess = nil
	}
	if sess == nil {
		var err error
		if sess, err = pl.connect(pl.ctx, name); err != nil {
			return nil, err
		}
		pl.sessions[name] = sess
	}
	if sess.isolation != pl.isolation {
		if err := execAll(pl.ctx, sess.conn, "SET default_transaction_isolation = '"+pl.isolation+"'"); err != nil {
			return nil, fmt.Errorf("ledger session: %w", err)
		}
		sess.isolation = pl.isolation
	}
	dc := &dbConn{l: l, name: name, pg: sess}
	l.conns = append(l.conns, dc)
	return dc, nil
}
