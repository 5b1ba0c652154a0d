package playground

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var sqliteDriver = &sqlite.Driver{}

// hookConn is what modernc.org/sqlite's connection offers for observing changes.
type hookConn interface {
	RegisterPreUpdateHook(sqlite.PreUpdateHookFn)
	RegisterCommitHook(sqlite.CommitHookFn)
	RegisterRollbackHook(sqlite.RollbackHookFn)
}

var (
	memdbSeq    atomic.Int64 // unique memdb names within the process
	openLedgers atomic.Int64 // ledgers not yet closed: the leak test watches it
)

func memdbURI(kind string) string {
	return "file:/idemlab-" + kind + "-" + strconv.FormatInt(memdbSeq.Add(1), 10) + "?vfs=memdb"
}

// ledgerImage is a ledger's pages kept in a WAL-mode database file of
// their own (walfile.go), with the Go mirror of its rows: a scenario's
// initial ledger (built once per process from SQL, kept for the life of the
// process) or the checker's copy of a run at a quiet moment. A ledger is
// restored from an image with SQLite's backup API, which copies pages
// instead of re-running SQL; a new ledger is the template's bytes written
// to a new file, which is cheaper still.
type ledgerImage struct {
	path  string
	bytes []byte // the file's content, for templates: a new ledger's file
	pages int64  // for templates: the file's page count
	rows  tableState
}

// close removes the image's file.
func (im *ledgerImage) close() {
	if im != nil {
		removeLedgerFile(im.path)
	}
}

// ledgerPageSize is a ledger's page size, set in its template. A ledger
// holds a few rows per table, each table fitting in one page of 1 KiB as
// well as in SQLite's default 4 KiB; but every page a statement touches is
// copied, cleared, checksummed and written to the WAL whole, so smaller
// pages make a run cheaper (BenchmarkRun: about a tenth). The page size
// changes no statement's answer: TestLocking_DifferentialAgainstWALFiles
// compares runs with WAL files of the default page size.
const ledgerPageSize = 1024

// newLedgerTemplate builds a scenario's initial ledger from its SQL.
func newLedgerTemplate(initSQL string) (*ledgerImage, error) {
	c, err := sqliteDriver.Open(memdbURI("template"))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := execRaw(c, fmt.Sprintf("PRAGMA page_size = %d;", ledgerPageSize)+schemaSQL+initSQL); err != nil {
		return nil, fmt.Errorf("template ledger: %w", err)
	}
	state, err := readTables(c)
	if err != nil {
		return nil, err
	}
	image, err := c.(interface{ Serialize() ([]byte, error) }).Serialize()
	if err != nil {
		return nil, fmt.Errorf("template ledger: %w", err)
	}
	image = walImage(image)
	path, err := newLedgerFile("template", image)
	if err != nil {
		return nil, err
	}
	return &ledgerImage{path: path, bytes: image, pages: pageCountOf(image), rows: state}, nil
}

func execRaw(c driver.Conn, q string, args ...driver.NamedValue) error {
	_, err := c.(driver.ExecerContext).ExecContext(context.Background(), q, args)
	return err
}

// readTables reads every table with its rowids; tests use it to check the
// change-hook mirror against SQLite itself.
func readTables(c driver.Conn) (tableState, error) {
	state := tableState{}
	for _, t := range tableOrder {
		cols := tableColumns[t]
		rows, err := c.(driver.QueryerContext).QueryContext(context.Background(), "SELECT rowid, "+strings.Join(cols, ", ")+" FROM "+t, nil)
		if err != nil {
			return nil, err
		}
		m := map[int64][]any{}
		dest := make([]driver.Value, len(cols)+1)
		for {
			if err := rows.Next(dest); err != nil {
				if err != io.EOF {
					rows.Close()
					return nil, err
				}
				break
			}
			vals := make([]any, len(cols))
			for i := range cols {
				vals[i] = normalize(dest[i+1])
			}
			m[dest[0].(int64)] = vals
		}
		rows.Close()
		state[t] = m
	}
	return state, nil
}

func normalize(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
	}
	return v
}

// ledger is one run's private database, a WAL-mode file (walfile.go): each
// worker has its own connection, and the change hooks keep a Go mirror of
// the committed rows so that snapshots never need a read.
//
// The pinned connection, opened with the ledger, doubles as the first
// worker's connection (it is never closed before the run ends, whatever
// happens to the worker), which saves opening and reading the schema on one
// more connection per run.
type ledger struct {
	path      string
	pinned    *dbConn
	claimed   bool    // the pinned connection belongs to a worker
	janitor   *dbConn // opened on the first prune
	conns     []*dbConn
	committed tableState
	// onCommit is told about every committed batch of changes (effect counting).
	onCommit func(changes []rowChange)

	// Reuse (pool.go).
	key       poolKey         // the pool it goes back to
	keeper    *keeper         // resets it; opened on the first reset
	free      []*dbConn       // a reused ledger's worker connections not yet taken
	restored  bool            // pages were restored with the backup API: never pooled
	dirty     map[string]bool // tables with committed changes since the last reset
	idleSince time.Time       // in the pool
	pg        *pgLedger       // a PostgreSQL ledger (pgledger.go); nil: this SQLite one
}

type dbConn struct {
	l       *ledger
	conn    driver.Conn
	name    string
	message string // the message whose handler is running, tags changes
	inTx    bool
	// snapshot: the open transaction has read (or holds the write lock), so
	// it sees the ledger as of that moment; writer: it holds the write lock.
	snapshot, writer bool

	// stmts keeps the statements prepared on a plain connection (the
	// engine's handlers and the janitor: a finite set of SQL texts), so that
	// a reused ledger's connection runs them without parsing them again;
	// nil on a sandboxed connection, which prepares every statement.
	stmts map[string]driver.Stmt

	pending      []rowChange // changes of the open transaction
	stmt         []rowChange // changes of the statement being executed
	commitSeen   bool
	rollbackSeen bool
	// rolledAt is how many of stmt's changes the rollback undid: SQLite
	// rolls back and retries an autocommit statement whose schema changed
	// under it (a ledger restored from a snapshot), then commits it.
	rolledAt int
	pg       *pgSession // a PostgreSQL session (pgsession.go); nil: SQLite
	learner  bool       // on PostgreSQL: runs a learner's SQL, which the allow-list checks (pgparse.go)
	pgLocked bool       // on PostgreSQL: the open transaction ran a statement that may hold a lock (pgsession.go)
}

// inTransaction reports whether the connection has a transaction open (as
// the engine told it with setInTransaction, or until a rollback).
func (c *dbConn) inTransaction() bool { return c.inTx }

// setInTransaction records that a BEGIN (true; immediate for BEGIN
// IMMEDIATE or EXCLUSIVE, which take the write lock at once) or a
// COMMIT/ROLLBACK (false) ran on the connection.
func (c *dbConn) setInTransaction(open, immediate bool) {
	c.inTx, c.snapshot, c.writer = open, open && immediate, open && immediate
}

// ranInTransaction records that a statement succeeded inside the open
// transaction: its first read fixes the transaction's snapshot, its first
// write (even one that changes no row) takes the write lock until it ends.
func (c *dbConn) ranInTransaction(write bool) {
	if c.inTx {
		c.snapshot = true
		c.writer = c.writer || write
	}
}

// holdsSnapshot reports whether the open transaction has read: in WAL mode
// it cannot wait for the write lock (SQLite answers SQLITE_BUSY at once).
func (c *dbConn) holdsSnapshot() bool { return c.inTx && c.snapshot }

// holdsWriteLock reports whether the connection's transaction holds the write lock.
func (c *dbConn) holdsWriteLock() bool { return c.inTx && c.writer }

// runsFor tags the changes the next statements make with a message id.
func (c *dbConn) runsFor(message string) { c.message = message }

// writeState writes what of the connection a run's future depends on (its
// open transaction and the changes it has not committed) for a state key.
func (c *dbConn) writeState(b *bytes.Buffer) {
	for _, f := range []bool{c.inTx, c.snapshot, c.writer} {
		if f {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	}
	for _, ch := range c.pending {
		b.WriteString(ch.Table + ch.Op)
		b.WriteString(fmt.Sprint(ch.Before, ch.After))
	}
}

// rowChange is one row changed by a statement, as the pre-update hook saw it.
type rowChange struct {
	Table    string
	Op       string // insert, update, delete
	OldRowID int64
	NewRowID int64
	Before   []any
	After    []any
	Message  string
}

// openLedger opens a ledger restored from im. Its worker connections are
// plain ones; a learner's handler runs on sandboxed ones (sandboxedConn).
func openLedger(im *ledgerImage) (*ledger, error) {
	bytes := im.bytes
	if bytes == nil {
		return nil, fmt.Errorf("open ledger: the image is not a template")
	}
	path, err := newLedgerFile("ledger", bytes)
	if err != nil {
		return nil, err
	}
	l := &ledger{path: path}
	c, err := sqliteDriver.Open(fileURI(path))
	if err != nil {
		removeLedgerFile(path)
		return nil, err
	}
	openLedgers.Add(1)
	l.useRows(im)
	l.pinned = l.attach("", c)
	return l, nil
}

// quiet reports whether no connection has a transaction open or changes
// pending: the moment an image of the ledger is its committed state.
func (l *ledger) quiet() bool {
	for _, c := range l.conns {
		if c.inTx || len(c.pending) > 0 {
			return false
		}
	}
	return true
}

// image copies a quiet ledger's pages and rows into an image of its own.
func (l *ledger) image() (*ledgerImage, error) {
	if !l.quiet() {
		return nil, fmt.Errorf("image: a transaction is open")
	}
	path, err := newLedgerFile("snapshot", nil)
	if err != nil {
		return nil, err
	}
	if err := copyPages(l.pinned.conn, fileURI(path), false); err != nil {
		removeLedgerFile(path)
		return nil, err
	}
	return &ledgerImage{path: path, rows: l.committed.clone()}, nil
}

// reset puts a used ledger back to im, keeping its (possibly sandboxed)
// connections: every open transaction is rolled back, then im's pages are
// restored over the pinned connection. Opening and confining connections is
// most of a fresh ledger's cost.
func (l *ledger) reset(im *ledgerImage) error {
	for _, c := range l.conns {
		if c.inTx || len(c.pending) > 0 {
			execRaw(c.conn, "ROLLBACK") // "no transaction is active" is fine
		}
		c.setInTransaction(false, false)
		c.pending, c.stmt, c.message = nil, c.stmt[:0], ""
	}
	l.restored = true
	if err := copyPages(l.pinned.conn, fileURI(im.path), true); err != nil {
		return err
	}
	l.committed = im.rows.clone()
	// Every table may now differ from the template: the next resetRows
	// must restore them all, not only those written since.
	if l.dirty == nil {
		l.dirty = map[string]bool{}
	}
	for _, t := range tableOrder {
		l.dirty[t] = true
	}
	return nil
}

// openedConn returns the worker's connection if it has one already.
func (l *ledger) openedConn(name string) *dbConn {
	for _, c := range l.conns {
		if c.name == name && c != l.janitor {
			return c
		}
	}
	return nil
}

// rows returns a table's committed rows (rowid → values); callers only read.
func (l *ledger) rows(table string) map[int64][]any { return l.committed[table] }

// conn returns a worker's own connection: the pinned one for the first
// worker that asks, a new one for the others.
func (l *ledger) conn(name string) (*dbConn, error) {
	if l.pg != nil {
		return l.pg.conn(l, name)
	}
	if c := l.takeFree(name); c != nil {
		return c, nil
	}
	if !l.claimed {
		l.claimed = true
		l.pinned.name = name
		return l.pinned, nil
	}
	c, err := sqliteDriver.Open(fileURI(l.path))
	if err != nil {
		return nil, err
	}
	return l.attach(name, c), nil
}

// sandboxedConn returns a worker's own connection confined by the sandbox
// (sandboxConfine) and wrapped with its statement deadline (timeout of CPU
// time): the only kind of connection a learner's SQL runs on.
func (l *ledger) sandboxedConn(name string, timeout time.Duration) (*dbConn, error) {
	if l.pg != nil { // confined by PostgreSQL's parser (pgparse.go) and its role's privileges (pgledger.go)
		c, err := l.pg.conn(l, name)
		if err == nil {
			c.learner = true
		}
		return c, err
	}
	if c := l.takeFree(name); c != nil {
		if sc, ok := c.conn.(*sandboxConn); ok {
			sc.timeout = timeout
			return c, nil
		}
		return nil, fmt.Errorf("ledger: a reused connection is not sandboxed") // pool keys keep kinds apart
	}
	c, err := l.conn(name)
	if err != nil {
		return nil, err
	}
	c.closeStmts()
	c.stmts = nil // a learner's SQL is prepared, and authorized, every time
	if err := sandboxConfine(c.conn, nil); err != nil {
		return nil, err
	}
	c.conn = &sandboxConn{Conn: c.conn, timeout: timeout}
	return c, nil
}

// janitorConn is the connection prune runs on (the broker's housekeeping,
// not a worker), opened on first use.
func (l *ledger) janitorConn() (*dbConn, error) {
	if l.pg != nil {
		return l.pg.conn(l, "janitor")
	}
	if l.janitor == nil {
		c, err := sqliteDriver.Open(fileURI(l.path))
		if err != nil {
			return nil, err
		}
		l.janitor = l.attach("janitor", c)
	}
	return l.janitor, nil
}

func (l *ledger) attach(name string, c driver.Conn) *dbConn {
	dc := &dbConn{l: l, conn: c, name: name, stmts: map[string]driver.Stmt{}}
	hc := c.(hookConn)
	hc.RegisterPreUpdateHook(func(d sqlite.SQLitePreUpdateData) {
		ch := rowChange{Table: d.TableName, OldRowID: d.OldRowID, NewRowID: d.NewRowID, Message: dc.message}
		n := d.Count()
		switch d.Op {
		case sqlite3.SQLITE_INSERT:
			ch.Op = "insert"
			ch.After = make([]any, n)
			d.New(ch.After...)
		case sqlite3.SQLITE_DELETE:
			ch.Op = "delete"
			ch.Before = make([]any, n)
			d.Old(ch.Before...)
		default:
			ch.Op = "update"
			ch.Before = make([]any, n)
			ch.After = make([]any, n)
			d.Old(ch.Before...)
			d.New(ch.After...)
		}
		for _, vs := range [][]any{ch.Before, ch.After} {
			for i := range vs {
				vs[i] = normalize(vs[i])
			}
		}
		dc.stmt = append(dc.stmt, ch)
	})
	hc.RegisterCommitHook(func() int32 { dc.commitSeen = true; return 0 })
	hc.RegisterRollbackHook(func() { dc.rollbackSeen, dc.rolledAt = true, len(dc.stmt) })
	l.conns = append(l.conns, dc)
	return dc
}

// execResult is what one statement did.
type execResult struct {
	Rows      int64 // rows affected (writes)
	Found     int64 // rows returned (queries)
	Err       error
	Busy      bool        // SQLITE_BUSY, in any of its forms
	Snapshot  bool        // SQLITE_BUSY_SNAPSHOT: the transaction's snapshot is stale
	Changes   []rowChange // made by this statement (visible to its transaction)
	Committed []rowChange // became visible to everyone with this statement
	Reverted  []rowChange // undone by a rollback during this statement
	Waiting   bool        // PostgreSQL has it waiting on BlockedBy's locks, still running (pgsession.go)
	BlockedBy []string
	// CommitRolledBack: PostgreSQL answered ROLLBACK without an error
	// (pgabort.go): to a COMMIT, it means the transaction had failed.
	CommitRolledBack bool
}

func (c *dbConn) exec(ctx context.Context, q string, args []driver.NamedValue, query bool) execResult {
	if c.pg != nil {
		return c.pgExec(ctx, q, args, query)
	}
	c.commitSeen, c.rollbackSeen = false, false
	c.stmt = c.stmt[:0]
	var res execResult
	stmt := c.prepared(q)
	if c.stmts != nil {
		// The engine's own short statements: sim.over checks the context
		// after each; one that can end costs the driver a goroutine and a
		// progress handler per statement. A learner's keep theirs.
		ctx = context.Background()
	}
	if query {
		var rows driver.Rows
		if stmt != nil {
			rows, res.Err = stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
		} else {
			rows, res.Err = c.conn.(driver.QueryerContext).QueryContext(ctx, q, args)
		}
		if res.Err == nil {
			dest := make([]driver.Value, len(rows.Columns()))
			for {
				if err := rows.Next(dest); err != nil {
					if err != io.EOF {
						res.Err = err
					}
					break
				}
				res.Found++
			}
			rows.Close()
		}
	} else {
		var r driver.Result
		if stmt != nil {
			r, res.Err = stmt.(driver.StmtExecContext).ExecContext(ctx, args)
		} else {
			r, res.Err = c.conn.(driver.ExecerContext).ExecContext(ctx, q, args)
		}
		if res.Err == nil {
			res.Rows, _ = r.RowsAffected()
		}
	}
	if res.Err != nil {
		var se *sqlite.Error
		if errors.As(res.Err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY {
			res.Busy = true
			res.Snapshot = se.Code() == sqlite3.SQLITE_BUSY_SNAPSHOT
		}
	}
	if res.Err == nil && len(c.stmt) > 0 {
		// A failed statement is undone by SQLite: its changes never happened.
		res.Changes = append([]rowChange(nil), c.stmt...)
	}
	if c.rollbackSeen {
		res.Reverted = c.pending
		c.pending = nil
		c.setInTransaction(false, false)
		if !c.commitSeen || res.Err != nil {
			return res
		}
		res.Changes = append([]rowChange(nil), c.stmt[c.rolledAt:]...) // the retried statement's, committed below
	}
	c.pending = append(c.pending, res.Changes...)
	if c.commitSeen && res.Err == nil {
		res.Committed = c.pending
		c.pending = nil
		c.l.apply(res.Committed)
	}
	return res
}

// maxStmts bounds a connection's prepared statements.
const maxStmts = 64

// prepared returns q prepared on a plain connection, preparing it the first
// time; nil when the connection does not keep statements or q does not
// prepare (the statement then runs the ordinary way, which reports why).
func (c *dbConn) prepared(q string) driver.Stmt {
	if c.stmts == nil {
		return nil
	}
	if st, ok := c.stmts[q]; ok {
		return st
	}
	if len(c.stmts) >= maxStmts {
		return nil
	}
	st, err := c.conn.Prepare(q)
	if err != nil {
		return nil
	}
	c.stmts[q] = st
	return st
}

func (c *dbConn) closeStmts() {
	for _, st := range c.stmts {
		st.Close()
	}
	clear(c.stmts)
}

// useRows makes im's rows the ledger's committed rows without copying
// them: a table's rows stay the image's (never written) until apply first
// changes them, and the tables in dirty are those it copied. l.dirty must
// be empty.
func (l *ledger) useRows(im *ledgerImage) {
	if l.committed == nil {
		l.committed = make(tableState, len(im.rows))
	}
	clear(l.committed)
	maps.Copy(l.committed, im.rows)
}

func (l *ledger) apply(changes []rowChange) {
	if l.dirty == nil && len(changes) > 0 {
		l.dirty = map[string]bool{}
	}
	for _, ch := range changes {
		rows := l.committed[ch.Table]
		if !l.dirty[ch.Table] {
			// The table's first change since useRows: its rows become the
			// ledger's own (after ledger.reset they are already, and this
			// copies them once more).
			rows = maps.Clone(rows)
			l.committed[ch.Table] = rows
			l.dirty[ch.Table] = true
		}
		if rows == nil {
			rows = map[int64][]any{}
			l.committed[ch.Table] = rows
		}
		switch ch.Op {
		case "insert":
			rows[ch.NewRowID] = ch.After
		case "delete":
			delete(rows, ch.OldRowID)
		default:
			delete(rows, ch.OldRowID)
			rows[ch.NewRowID] = ch.After
		}
	}
	if l.onCommit != nil && len(changes) > 0 {
		l.onCommit(changes)
	}
}

// snapshot renders the committed rows for the trace, in table order and
// rowid order.
func (l *ledger) snapshot() []TableRows { return renderTables(l.committed) }

// close ends a run's use of a ledger for good: shut, and no longer counted
// as open by a run.
func (l *ledger) close() {
	l.shut()
	openLedgers.Add(-1)
}

// shut closes every connection and removes the ledger's files.
func (l *ledger) shut() {
	for i := len(l.conns) - 1; i >= 0; i-- {
		l.conns[i].closeStmts()
		l.conns[i].conn.Close()
	}
	l.conns, l.free = nil, nil
	if l.keeper != nil {
		l.keeper.close()
		l.keeper = nil
	}
	removeLedgerFile(l.path)
}
