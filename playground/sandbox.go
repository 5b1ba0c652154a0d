package playground

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The sandbox fences the worker connections that run a learner's handler.
// Learner SQL is untrusted: it runs inside the server process, next to other
// learners' ledgers and the server's disk. The parser already refuses every
// verb but SELECT/INSERT/UPDATE/DELETE/REPLACE and transactions; the sandbox
// is the second wall, enforced by SQLite itself on each connection:
//
//   - an authorizer that allows reading and writing the ledger's own rows and
//     transactions, and denies ATTACH/DETACH, DDL (tables, triggers, views),
//     PRAGMA, recursive CTEs, any table but the ledger's four (sqlite_* and
//     pragma_* tables included), other schemas and every function
//     that is not on a short arithmetic list (load_extension, zeroblob,
//     randomblob, printf… are all off); the same authorizer checks each
//     statement when a handler is parsed (checkSQL);
//   - limits: no attached database (SQLITE_LIMIT_ATTACHED 0), values of at
//     most 64 KiB, statements of at most 8 KiB, no trigger recursion;
//   - a page cap on the ledger (PRAGMA max_page_count), so a loop of inserts
//     cannot fill the server's memory;
//   - a deadline per statement (sandboxStatementTimeout of CPU time, see
//     sandboxDeadline; ten times that in a -race binary): modernc.org/sqlite
//     interrupts the statement when its context ends. BEGIN, COMMIT and
//     ROLLBACK are not metered (sandboxTransactionControl).
//
// Every refusal becomes a statement error that starts with "refused:" and
// says why, so the checker can tell it from an ordinary constraint failure.
const (
	sandboxStatementTimeout = 30 * time.Millisecond
	sandboxCheckTimeout     = 5 * time.Second
	sandboxMaxBytes         = 512 << 10 // a ledger's page cap, in bytes
	sandboxMaxPages         = sandboxMaxBytes / ledgerPageSize
	sandboxMaxLength        = 64 << 10
	sandboxMaxSQLLength     = 8 << 10
)

// sandboxRefused is the prefix of every sandbox error message;
// sandboxTooLong is in the message of a statement stopped at its deadline.
const (
	sandboxRefused = "refused: "
	sandboxTooLong = "ran longer than"
)

// sandboxFunctions are the SQL functions learner SQL may call: arithmetic,
// guards and aggregates, none of which can build a large value or reach
// outside the ledger.
var sandboxFunctions = map[string]bool{
	"abs": true, "coalesce": true, "ifnull": true, "iif": true, "nullif": true, "max": true, "min": true,
	"length": true, "lower": true, "upper": true, "typeof": true, "round": true,
	"count": true, "sum": true, "total": true, "avg": true,
}

// sandboxAuthorizer is the one authorizer of learner SQL, consulted by
// SQLite while it compiles a statement: on every worker connection that
// runs a learner's handler, and on the checker connection that prepares
// each statement when the handler is parsed, so that what the sandbox
// refuses at run time is refused at parse time, with its line.
// denied, when not nil, is told in words why a statement was refused.
func sandboxAuthorizer(denied func(why string)) func(sqlite.AuthorizerActionCode, string, string, string, string) sqlite.AuthorizerReturnCode {
	deny := func(why string) sqlite.AuthorizerReturnCode {
		if denied != nil {
			denied(why)
		}
		return sqlite.AuthorizerDeny
	}
	const rowsOnly = "only reads and writes of the ledger's rows are allowed"
	return func(action sqlite.AuthorizerActionCode, arg1, arg2, dbName, _ string) sqlite.AuthorizerReturnCode {
		if dbName != "" && dbName != "main" {
			return deny(rowsOnly) // temp or an attached schema
		}
		switch action {
		case sqlite.AuthSelect, sqlite.AuthTransaction:
			return sqlite.AuthorizerOK
		case sqlite.AuthRead:
			// Only the ledger's tables. A common table expression or a
			// subquery is never reported as a read; what else is read is
			// an eponymous virtual table, a table-valued function
			// (json_each, json_tree, dbstat, sqlite_dbpage, pragma_*),
			// which the function allow-list never sees, so it is refused
			// by its table name here, with or without a column read.
			if !isLedgerTable(arg1) {
				// (A recursive CTE is reported as a read of its own name.)
				return deny(fmt.Sprintf("reading %s is refused: statements may read only the ledger's tables (%s); table-valued functions and recursive queries are not allowed", arg1, strings.Join(tableOrder, ", ")))
			}
			return sqlite.AuthorizerOK
		case sqlite.AuthInsert, sqlite.AuthUpdate, sqlite.AuthDelete:
			if !isLedgerTable(arg1) {
				return deny(rowsOnly)
			}
			return sqlite.AuthorizerOK
		case sqlite.AuthFunction:
			if sandboxFunctions[strings.ToLower(arg2)] {
				return sqlite.AuthorizerOK
			}
			return deny(fmt.Sprintf("the function %s is not allowed; functions are %s", arg2, sandboxFunctionList()))
		case sqlite.AuthRecursive:
			return deny("recursive queries are not allowed")
		}
		return deny(rowsOnly)
	}
}

func isLedgerTable(name string) bool {
	_, ok := tableColumns[strings.ToLower(name)]
	return ok
}

// sandboxConfine fences one raw connection. It must run after the schema and
// the initial rows are in place (the authorizer forbids DDL) and before any
// learner statement. denied is passed to sandboxAuthorizer.
func sandboxConfine(c driver.Conn, denied func(why string)) error {
	reg, ok := c.(sqlite.AuthorizerRegisterer)
	if !ok {
		return fmt.Errorf("sandbox: the sqlite driver offers no authorizer")
	}
	if err := execRaw(c, fmt.Sprintf("PRAGMA max_page_count = %d", sandboxMaxPages)); err != nil {
		return fmt.Errorf("sandbox: page cap: %w", err)
	}
	if err := sandboxLimits(c); err != nil {
		return fmt.Errorf("sandbox: limits: %w", err)
	}
	return reg.RegisterAuthorizer(sandboxAuthorizer(denied))
}

// sandboxLimits sets sqlite3_limit on the connection. The driver only offers
// it through database/sql (sqlite.Limit takes a *sql.Conn), so the raw
// connection is lent to a throwaway sql.DB through a wrapper that the driver
// sees through (Unwrap) and that does not close it.
func sandboxLimits(c driver.Conn) error {
	db := sql.OpenDB(sandboxLender{c})
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, l := range []struct{ id, val int }{
		{sqlite3.SQLITE_LIMIT_ATTACHED, 0},
		{sqlite3.SQLITE_LIMIT_LENGTH, sandboxMaxLength},
		{sqlite3.SQLITE_LIMIT_SQL_LENGTH, sandboxMaxSQLLength},
		{sqlite3.SQLITE_LIMIT_TRIGGER_DEPTH, 1},
		{sqlite3.SQLITE_LIMIT_EXPR_DEPTH, 100},
		{sqlite3.SQLITE_LIMIT_COMPOUND_SELECT, 8},
	} {
		if _, err := sqlite.Limit(conn, l.id, l.val); err != nil {
			return err
		}
	}
	return nil
}

type sandboxLender struct{ c driver.Conn }

func (k sandboxLender) Connect(context.Context) (driver.Conn, error) {
	return sandboxLent{k.c}, nil
}
func (k sandboxLender) Driver() driver.Driver { return sqliteDriver }

// sandboxLent is the lent connection: Close leaves it open for the ledger.
type sandboxLent struct{ driver.Conn }

func (l sandboxLent) Unwrap() driver.Conn { return l.Conn }
func (l sandboxLent) Close() error        { return nil }

// sandboxConn wraps a confined worker connection so that every statement
// gets its own deadline and every refusal a clear message. Hooks were
// registered on the raw connection before it was wrapped.
type sandboxConn struct {
	driver.Conn
	timeout time.Duration
}

// Unwrap returns the confined raw connection (for the backup API).
func (c *sandboxConn) Unwrap() driver.Conn { return c.Conn }

func (c *sandboxConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	if sandboxTransactionControl(q) {
		// BEGIN, COMMIT and ROLLBACK run no learner expression: with no
		// triggers and no deferred constraints, their work is the engine's
		// (a WAL commit, a rollback of the transaction's pages), so they
		// are not metered. A refused COMMIT would leave a verdict to the
		// machine's load, and SQLite's rollback after it would find no
		// transaction.
		return c.Conn.(driver.ExecerContext).ExecContext(ctx, q, args)
	}
	sctx, stop := sandboxDeadline(ctx, c.timeout)
	defer stop()
	r, err := c.Conn.(driver.ExecerContext).ExecContext(sctx, q, args)
	return r, sandboxError(ctx, sctx, c.timeout, err)
}

func (c *sandboxConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	sctx, stop := sandboxDeadline(ctx, c.timeout)
	rows, err := c.Conn.(driver.QueryerContext).QueryContext(sctx, q, args)
	if err != nil {
		err = sandboxError(ctx, sctx, c.timeout, err)
		stop()
		return nil, err
	}
	return &sandboxRows{Rows: rows, parent: ctx, ctx: sctx, stop: stop, timeout: c.timeout}, nil
}

// sandboxWallCap stops a statement whatever CPU it used: a statement that
// waits this long is stuck (worker connections have busy_timeout=0, so a
// statement never waits for a lock; only a starved machine gets here, and
// the learner is told so, not that their statement was too costly).
const sandboxWallCap = 5 * time.Second

// sandboxTransactionControl tells BEGIN, COMMIT, END and ROLLBACK (the
// statements a handler's parser accepts besides reads and writes, see
// isTxVerb) from the statements the sandbox meters.
func sandboxTransactionControl(q string) bool {
	q = strings.TrimLeft(q, " \t\r\n")
	end := strings.IndexFunc(q, func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') })
	if end < 0 {
		end = len(q)
	}
	return isTxVerb(strings.ToUpper(q[:end]))
}

// sandboxDeadline returns a context that ends when the statement has used
// limit of CPU time (or sandboxWallCap of wall time). CPU time, not wall
// time: on a loaded server an innocent statement can wait for a core longer
// than the limit, and interrupting it would roll back its whole
// transaction. The thread is locked so that its CPU clock is the
// statement's; the clock is read only when the limit has passed in wall
// time, so a quick statement costs a timer and no more.
func sandboxDeadline(ctx context.Context, limit time.Duration) (context.Context, func()) {
	limit *= sandboxSlowdown
	wallCap := sandboxWallCap * sandboxSlowdown
	runtime.LockOSThread()
	sctx, cancel := context.WithCancelCause(ctx)
	clock, ok := threadClock()
	var start int64
	if ok {
		start, ok = clockNanos(clock)
	}
	began := time.Now()
	var mu sync.Mutex
	var timer *time.Timer
	check := func() {
		mu.Lock()
		defer mu.Unlock()
		if sctx.Err() != nil {
			return
		}
		used := time.Since(began)
		if ok {
			if now, ok2 := clockNanos(clock); ok2 {
				used = time.Duration(now - start)
			}
		}
		if used >= limit {
			cancel(errSandboxDeadline)
			return
		}
		if time.Since(began) >= wallCap {
			cancel(errSandboxStalled)
			return
		}
		timer.Reset(max(limit-used, time.Millisecond))
	}
	mu.Lock()
	timer = time.AfterFunc(limit, check)
	mu.Unlock()
	return sctx, func() {
		timer.Stop()
		mu.Lock()
		cancel(nil)
		mu.Unlock()
		runtime.UnlockOSThread()
	}
}

var (
	errSandboxDeadline = errors.New("statement deadline")
	errSandboxStalled  = errors.New("statement stalled")
)

// sandboxRows keeps the statement's deadline running while rows are read.
type sandboxRows struct {
	driver.Rows
	parent, ctx context.Context
	stop        func()
	timeout     time.Duration
}

func (r *sandboxRows) Next(dest []driver.Value) error {
	return sandboxError(r.parent, r.ctx, r.timeout, r.Rows.Next(dest))
}

func (r *sandboxRows) Close() error {
	defer r.stop()
	return r.Rows.Close()
}

// sandboxError rewrites the errors the sandbox causes into messages a
// learner can act on; other errors pass unchanged.
func sandboxError(parent, stmt context.Context, timeout time.Duration, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	if parent.Err() == nil && context.Cause(stmt) == errSandboxStalled {
		return fmt.Errorf("%sthe statement did not finish within %d s because the server is too busy; try again in a moment", sandboxRefused, int(sandboxWallCap/time.Second))
	}
	if parent.Err() == nil && context.Cause(stmt) == errSandboxDeadline {
		return fmt.Errorf("%sthe statement %s %d ms of CPU time and was stopped; a handler statement should touch a few rows", sandboxRefused, sandboxTooLong, timeout.Milliseconds())
	}
	var se *sqlite.Error
	errors.As(err, &se)
	if strings.Contains(err.Error(), "not authorized to use function") {
		return fmt.Errorf("%sthat function is not available in the sandbox; handler SQL may use %s", sandboxRefused, sandboxFunctionList())
	}
	if se != nil {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_AUTH:
			return fmt.Errorf("%snot authorized: handler SQL may read and write the ledger's rows, and nothing else (no ATTACH, PRAGMA, schema changes, recursive queries or unlisted functions)", sandboxRefused)
		case sqlite3.SQLITE_FULL:
			return fmt.Errorf("%sthe ledger is capped at %d KiB and this statement would grow it past that", sandboxRefused, sandboxMaxBytes>>10)
		case sqlite3.SQLITE_TOOBIG:
			return fmt.Errorf("%sa value or statement is larger than the sandbox allows (%d KiB)", sandboxRefused, sandboxMaxLength>>10)
		}
	}
	return err
}

func sandboxFunctionList() string {
	names := make([]string, 0, len(sandboxFunctions))
	for n := range sandboxFunctions {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// sandboxWorkers opens every worker's connection of a run now, sandboxed
// (ledger.sandboxedConn). The engine opens connections lazily and only
// when a worker has none, so these are the ones used.
func sandboxWorkers(s *sim) error {
	for _, w := range s.workers {
		if w.db != nil {
			continue
		}
		db, err := s.l.sandboxedConn(w.name, s.meter.statementTimeout())
		if err != nil {
			return err
		}
		w.db = db
	}
	return nil
}

// isBuiltinHandler tells the engine's own handlers (trusted, embedded, run
// on plain connections) from handlers parsed from a learner's source (run
// sandboxed). It is the one place that asks.
func isBuiltinHandler(h *Handler) bool {
	return h != nil && builtinHandlers[h.Name] == h
}

// sqlChecker prepares learner statements against the schema at parse time,
// on a connection confined like a learner's worker connection, so that a
// typo, or a statement the sandbox would refuse, is reported with its line
// before anything runs.
var sqlChecker struct {
	sync.Mutex
	conn   driver.Conn
	denied string // why the authorizer refused the statement being checked
}

// openCheckerConn opens the checker's connection: schema installed, then
// confined as a learner's worker connection is, with denied told why the
// authorizer refuses a statement. A connection that could not be set up is
// closed and its error returned: a checker without the schema or the
// authorizer would refuse every statement, or accept what the sandbox
// refuses.
func openCheckerConn(schema string, denied func(why string)) (driver.Conn, error) {
	c, err := sqliteDriver.Open(memdbURI("checker"))
	if err != nil {
		return nil, err
	}
	if err := execRaw(c, schema); err != nil {
		c.Close()
		return nil, fmt.Errorf("sql checker: schema: %w", err)
	}
	if err := sandboxConfine(c, denied); err != nil {
		c.Close()
		return nil, fmt.Errorf("sql checker: sandbox: %w", err)
	}
	return c, nil
}

func checkSQL(st *statement) error {
	sqlChecker.Lock()
	defer sqlChecker.Unlock()
	if sqlChecker.conn == nil {
		c, err := openCheckerConn(schemaSQL, func(why string) {
			if sqlChecker.denied == "" {
				sqlChecker.denied = why
			}
		})
		if err != nil {
			return err
		}
		sqlChecker.conn = c
	}
	sqlChecker.denied = ""
	s, err := sqlChecker.conn.Prepare(st.SQL)
	if err != nil {
		if hint := sqliteDialectProblem(st.SQL); hint != "" {
			return fmt.Errorf("%s", hint)
		}
	}
	if err != nil && sqlChecker.denied != "" {
		return fmt.Errorf("%s", sqlChecker.denied)
	}
	if err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "SQL logic error: "))
	}
	s.Close()
	return nil
}
