package playground

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A worker's PostgreSQL session. Each statement runs in a goroutine of its
// own; the engine waits until it has *settled*: either it finished, or
// PostgreSQL has it waiting on a lock (pg_blocking_pids names the sessions
// it waits for). A waiting statement stays in flight while the scheduler
// runs the other workers; after every statement the engine runs, every
// statement in flight settles again, so which statements finished before
// the next one runs is decided by the scheduler's order and PostgreSQL's
// answers, never by timing: the same script gives the same trace.

// pgSession is one connection of a ledger's role.
type pgSession struct {
	name      string
	ledger    *pgLedger
	conn      *pgconn.PgConn
	pid       uint32
	isolation string
	notices   []string      // row changes reported by the triggers during the statement
	overflow  bool          // the statement changed more than pgMaxChanges rows: cancelled
	cancelled chan struct{} // with overflow: closed once the server has the cancel request
	dirty     bool          // ran a learner's SQL since its last reset (pgLedger.discard)
	inflight  *pgStatement
}

// pgStatement is a statement started on a session.
type pgStatement struct {
	sql      string
	query    bool
	done     chan struct{}
	tag      pgconn.CommandTag
	found    int64
	err      error
	notices  []string
	settled  bool     // seen waiting once: its deadlock check has had its time
	blockers []string // the sessions it waits for, as last seen
}

// pgMaxChanges bounds the rows one statement may change: each is a notice
// the session keeps until the statement ends (a ledger holds a few rows; an
// INSERT … SELECT of a cross join could send millions). A statement past it
// is cancelled, and fails with a message that says why.
const pgMaxChanges = 10000

func (sess *pgSession) notice(_ *pgconn.PgConn, n *pgconn.Notice) {
	if n.Message != "idemlab-change" {
		return
	}
	if len(sess.notices) >= pgMaxChanges {
		if !sess.overflow {
			sess.overflow = true
			done := make(chan struct{})
			sess.cancelled = done
			go func() {
				defer close(done)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				sess.conn.CancelRequest(ctx)
			}()
		}
		return
	}
	sess.notices = append(sess.notices, n.Detail)
}

// pgParamTypes: the parameters that are text; the others are bigint.
var pgTextParams = map[string]bool{"message_id": true, "account_id": true, "order_id": true, "payment_id": true, "sku": true, "partition": true}

const (
	pgOIDText = 25
	pgOIDInt8 = 20
)

// start runs q in a goroutine of its own.
func (sess *pgSession) start(ctx context.Context, q string, args []driver.NamedValue, query bool) {
	st := &pgStatement{sql: q, query: query, done: make(chan struct{})}
	sess.inflight = st
	p := pgPlanOf(q) // parsed once per text, then kept
	sqlText, names := p.sql, p.names
	values := make([][]byte, len(names))
	oids := make([]uint32, len(names))
	for i, name := range names {
		oids[i] = pgOIDInt8
		if pgTextParams[name] {
			oids[i] = pgOIDText
		}
		for _, a := range args {
			if a.Name == name && a.Value != nil {
				values[i] = []byte(valueText(a.Value))
			}
		}
	}
	sess.notices, sess.overflow = nil, false
	// The statement does not end with the run's context. pgconn would close
	// the connection mid-query and send its cancel request asynchronously,
	// and the server could still run the statement, an autocommitted one
	// to its commit, after the release has reset the rows for the next run
	// (which then skips its reset): a fresh run would start from other
	// rows (TestPostgresLedger_ACancelledRunEndsItsStatementBeforeTheReset).
	// A run that ends leaves the statement to abandon, which cancels it and
	// waits for its end; statement_timeout and lock_timeout bound it.
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer close(st.done)
		rr := sess.conn.ExecParams(ctx, sqlText, values, oids, nil, nil)
		for rr.NextRow() {
			st.found++
		}
		st.tag, st.err = rr.Close()
		st.notices = sess.notices
		if sess.overflow {
			// The cancel reaches the server before the next statement
			// starts, so it never cancels that one instead.
			<-sess.cancelled
			st.err = &pgconn.PgError{Severity: "ERROR", Code: "54000",
				Message: fmt.Sprintf("the statement changed more than %d rows and was cancelled: a handler's statement changes a few rows of the ledger", pgMaxChanges)}
			st.notices, sess.notices = nil, nil
		}
	}()
}

// pgSettleWaits counts the deadlock checks' waits settle took (tests).
var pgSettleWaits atomic.Int64

// settle waits until the statement in flight on sess has finished (true)
// or waits on a lock (false, with its blockers named).
func (pl *pgLedger) settle(sess *pgSession) (bool, error) {
	st := sess.inflight
	// Most statements finish within a round trip; asking about locks
	// before then would only add one.
	poll := 2 * time.Millisecond
	if st.settled {
		// Seen waiting already (its deadlock check has had its time): a
		// lock is released before the statement that releases it returns,
		// so asking at once tells whether it still waits.
		poll = 0
	}
	if pl.cannotWait(sess) {
		poll = pgLockTimeout // it finishes: statement_timeout bounds it
	}
	deadline := time.Now().Add(pgLockTimeout + time.Second)
	for {
		select {
		case <-st.done:
			return true, nil
		case <-time.After(poll):
		}
		pids, err := pl.blockingPIDs(sess.pid)
		if err != nil {
			return false, err
		}
		if len(pids) > 0 {
			if !st.settled && (pl.cannotCloseADeadlock(sess) || pl.waitsHoldingNothing(sess)) {
				st.settled = true // nothing of its own that another could wait on
			}
			if !st.settled {
				// Let PostgreSQL run this wait's deadlock check before
				// anything else runs (pgDeadlockSettle).
				st.settled = true
				pgSettleWaits.Add(1)
				select {
				case <-st.done:
					return true, nil
				case <-time.After(pgDeadlockSettle):
				}
				if pids, err = pl.blockingPIDs(sess.pid); err != nil {
					return false, err
				}
				if len(pids) == 0 {
					continue
				}
			}
			st.blockers = pl.namesOf(pids)
			return false, nil
		}
		if time.Now().After(deadline) {
			return false, fmt.Errorf("ledger session %s: a statement neither finished nor waited on a lock within %s", sess.name, pgLockTimeout)
		}
		poll = min(max(2*poll, time.Millisecond), 5*time.Millisecond)
	}
}

// waitsHoldingNothing: the statement sess has waiting holds no lock that
// another session could wait on, nor does its transaction (it has run
// only SELECTs that lock nothing), so no wait cycle can go through sess
// and settle need not give PostgreSQL's deadlock check its time
// (pgDeadlockSettle). The race's INSERT of its dedupe row, and an advisory
// lock taken first thing in a transaction, are such waits.
func (pl *pgLedger) waitsHoldingNothing(sess *pgSession) bool {
	if pl.l == nil || !pgPlanOf(sess.inflight.sql).waitsHoldingNothing {
		return false
	}
	for _, c := range pl.l.conns {
		if c.pg == sess {
			return len(c.pending) == 0 && !c.pgLocked
		}
	}
	return false
}

func (pl *pgLedger) blockingPIDs(pid uint32) ([]uint32, error) {
	if pl.monitor == nil || pl.monitor.conn.IsClosed() {
		return nil, fmt.Errorf("ledger %s: its monitor session is closed", pl.schema)
	}
	rr := pl.monitor.conn.ExecParams(pl.ctx, "SELECT unnest(pg_blocking_pids($1))", [][]byte{[]byte(strconv.FormatUint(uint64(pid), 10))}, []uint32{23}, nil, nil)
	var out []uint32
	for rr.NextRow() {
		n, _ := strconv.ParseUint(string(rr.Values()[0]), 10, 32)
		out = append(out, uint32(n))
	}
	_, err := rr.Close()
	return out, err
}

// namesOf names the run's sessions among pids, in worker order.
func (pl *pgLedger) namesOf(pids []uint32) []string {
	var out []string
	for _, name := range pl.sessionOrder() {
		if slices.Contains(pids, pl.sessions[name].pid) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		out = []string{"another session"}
	}
	return out
}

// sessionOrder is the sessions' names, sorted: a deterministic order.
func (pl *pgLedger) sessionOrder() []string {
	names := make([]string, 0, len(pl.sessions))
	for n := range pl.sessions {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// settleAll settles every statement in flight.
func (pl *pgLedger) settleAll() error {
	for _, name := range pl.sessionOrder() {
		if sess := pl.sessions[name]; sess.inflight != nil {
			if _, err := pl.settle(sess); err != nil {
				return err
			}
		}
	}
	return nil
}

// abandon cancels the statement in flight, if any, and rolls back the open
// transaction: what a connection that closes does to its work.
func (sess *pgSession) abandon(ctx context.Context) error {
	if st := sess.inflight; st != nil {
		select {
		case <-st.done:
		default:
			if err := sess.conn.CancelRequest(ctx); err != nil {
				return err
			}
			select {
			case <-st.done:
			case <-time.After(5 * time.Second):
				return fmt.Errorf("ledger session %s: a cancelled statement did not end", sess.name)
			}
		}
		sess.inflight = nil
	}
	if sess.conn.TxStatus() != 'I' {
		sess.notices = nil
		if err := execAll(ctx, sess.conn, "ROLLBACK"); err != nil {
			return err
		}
	}
	sess.notices = nil
	return nil
}

// pgExec is dbConn.exec on a PostgreSQL session: the statement's result in
// the engine's terms, or Waiting while PostgreSQL has it waiting on a lock.
func (c *dbConn) pgExec(ctx context.Context, q string, args []driver.NamedValue, query bool) (res execResult) {
	sess, pl := c.pg, c.pg.ledger
	defer func() {
		if err := pl.settleAll(); err != nil && res.Err == nil {
			res.Err = err
		}
		// A statement in flight is a transaction open (an autocommitted
		// statement is one too): a crash must roll it back.
		c.inTx = sess.inflight != nil || sess.conn.TxStatus() != 'I'
		if !c.inTx {
			c.pgLocked = false
		}
	}()
	if st := sess.inflight; st != nil && (st.sql != q || q == "ROLLBACK") {
		// The worker gives up on a waiting statement (a crash).
		if err := sess.abandon(ctx); err != nil {
			return execResult{Err: err}
		}
		res.Reverted, c.pending = c.pending, nil
		return res
	}
	if sess.inflight == nil {
		if c.learner {
			sess.dirty = true
			if r := pgPlanOf(q).refusal; r != nil && !pgParserOff.Load() {
				return execResult{Err: r.at(0)}
			}
		}
		sess.start(ctx, q, args, query)
	}
	done, err := pl.settle(sess)
	if err != nil {
		return execResult{Err: err}
	}
	st := sess.inflight
	if !done {
		res.Waiting, res.BlockedBy = true, st.blockers
		return res
	}
	sess.inflight = nil
	if !pgPlanOf(q).readOnly {
		c.pgLocked = true // until the transaction ends
	}
	res.Err = st.err
	if res.Err == nil {
		if query {
			res.Found = st.found
		} else {
			res.Rows = st.tag.RowsAffected()
		}
	} else if errors.Is(res.Err, context.Canceled) || errors.Is(res.Err, context.DeadlineExceeded) {
		return res
	}
	changes, err := c.pgChanges(st.notices)
	if err != nil {
		return execResult{Err: err}
	}
	if res.Err == nil {
		res.Changes = changes
		c.pending = append(c.pending, changes...)
	}
	if sess.conn.TxStatus() == 'I' {
		// The transaction ended: committed, unless it failed or rolled
		// back (a COMMIT of a failed transaction answers ROLLBACK).
		if res.Err == nil && st.tag.String() != "ROLLBACK" {
			res.Committed = c.pending
			c.l.apply(res.Committed)
		} else {
			res.Reverted = c.pending
			res.CommitRolledBack = res.Err == nil // a COMMIT's, or a ROLLBACK's own answer
		}
		c.pending = nil
	}
	return res
}

// pgChanges turns the triggers' notices into the engine's row changes,
// giving each row the rowid the Go mirror knows it by.
func (c *dbConn) pgChanges(notices []string) ([]rowChange, error) {
	var out []rowChange
	pl := c.pg.ledger
	for _, n := range notices {
		var parts []json.RawMessage
		if err := json.Unmarshal([]byte(n), &parts); err != nil || len(parts) != 4 {
			return nil, fmt.Errorf("ledger change %q: %v", n, err)
		}
		var table, op string
		json.Unmarshal(parts[0], &table)
		json.Unmarshal(parts[1], &op)
		cols, ok := tableColumns[table]
		if !ok {
			return nil, fmt.Errorf("ledger change on unknown table %q", table)
		}
		before, err := pgRow(cols, parts[2])
		if err != nil {
			return nil, err
		}
		after, err := pgRow(cols, parts[3])
		if err != nil {
			return nil, err
		}
		ch := rowChange{Table: table, Op: op, Before: before, After: after, Message: c.message}
		if before != nil {
			ch.OldRowID = c.pgRowID(table, before, out)
			ch.NewRowID = ch.OldRowID
		}
		if op == "insert" {
			ch.NewRowID = pl.nextRowID[table]
			pl.nextRowID[table]++
		}
		out = append(out, ch)
	}
	return out, nil
}

// pgRow reads a row that to_jsonb wrote (null: none) in the table's column
// order, with integers as int64 as SQLite gives them.
func pgRow(cols []string, raw json.RawMessage) ([]any, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("ledger row %s: %w", raw, err)
	}
	vals := make([]any, len(cols))
	for i, col := range cols {
		switch v := m[col].(type) {
		case json.Number:
			if n, err := v.Int64(); err == nil {
				vals[i] = n
			} else {
				f, _ := v.Float64()
				vals[i] = f
			}
		default:
			vals[i] = v
		}
	}
	return vals, nil
}

// pgRowID finds the rowid of the row a statement updated or deleted: a row
// this transaction wrote (latest first), else a committed row with the same
// values (the lowest rowid among identical rows).
func (c *dbConn) pgRowID(table string, before []any, stmt []rowChange) int64 {
	mine := append(append([]rowChange(nil), c.pending...), stmt...)
	for i := len(mine) - 1; i >= 0; i-- {
		if ch := mine[i]; ch.Table == table && ch.After != nil && slices.Equal(ch.After, before) {
			return ch.NewRowID
		}
	}
	rows := c.l.committed[table]
	ids := make([]int64, 0, len(rows))
	for id := range rows {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if slices.Equal(rows[id], before) {
			return id
		}
	}
	if table != "shipments" { // the same primary key, another version
		for _, id := range ids {
			if rows[id][0] == before[0] {
				return id
			}
		}
	}
	pl := c.pg.ledger
	pl.nextRowID[table]++
	return pl.nextRowID[table] - 1
}

// pgWaiting records a statement that PostgreSQL has waiting on a lock.
func (s *sim) pgWaiting(w *worker, st Step, res execResult) {
	again := w.blockedAt > 0
	if !again {
		s.blockSeq++
		w.blockedAt = s.blockSeq
	}
	st.Kind = StepBlocked
	who := strings.Join(res.BlockedBy, " and ")
	if again {
		st.Note = fmt.Sprintf("%s still waits on %s's transaction", w.name, who)
	} else {
		st.Note = fmt.Sprintf("%s waits on %s's transaction: PostgreSQL holds the statement until %s commits or rolls back (pg_blocking_pids); the scheduler runs the others", w.name, who, who)
	}
	s.record(st)
}

// pgSQLState is the SQLSTATE of a PostgreSQL error, or "".
func pgSQLState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// pgJanitorGivesUp cancels a prune that PostgreSQL has waiting on a
// worker's open transaction: the janitor runs on its own schedule and does
// not hold up the workers, so the prune does not run now.
func (s *sim) pgJanitorGivesUp(janitor *dbConn, res execResult) execResult {
	if err := janitor.pg.abandon(s.ctx); err != nil {
		return execResult{Err: err}
	}
	janitor.inTx = false
	return execResult{Err: fmt.Errorf("the rows to delete are locked by %s's open transaction", strings.Join(res.BlockedBy, " and "))}
}
