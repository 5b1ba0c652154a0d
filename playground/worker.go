package playground

import (
	"database/sql/driver"
	"fmt"
	"strings"
)

// runToCompletion runs w to its ack (or crash). When w is blocked by a lock,
// the scheduler steps another worker that has a message in hand. In WAL mode
// the writer that holds the lock is never blocked, so someone can always
// move; the scheduler gives up only if the lock holder cannot run.
func (s *sim) runToCompletion(w *worker) error {
	for n := 0; w.job != nil; n++ {
		if n > maxSchedulerRuns {
			s.record(Step{Kind: StepNote, Worker: w.name, Note: "the scheduler gave up: no worker could make progress"})
			return nil
		}
		out, err := s.stepWorker(w)
		if err != nil {
			return err
		}
		if out != blocked {
			continue
		}
		moved := false
		for _, o := range s.schedulerOrder(w) {
			s.record(Step{Kind: StepNote, Worker: o.name, Note: fmt.Sprintf("%s cannot go on yet: the scheduler runs %s", w.name, o.name)})
			out, err := s.stepWorker(o)
			if err != nil {
				return err
			}
			if out != blocked {
				moved = true
				break
			}
		}
		if !moved {
			s.record(Step{Kind: StepNote, Worker: w.name, Note: "the scheduler gave up: the lock holder cannot run"})
			return nil
		}
	}
	return nil
}

// schedulerOrder lists the other workers with a message in hand: those not
// blocked first, in worker order (rotated by the seed when one is given).
func (s *sim) schedulerOrder(except *worker) []*worker {
	var free, waiting []*worker
	for _, o := range s.workers {
		if o == except || o.job == nil {
			continue
		}
		if o.blockedAt > 0 {
			waiting = append(waiting, o)
		} else {
			free = append(free, o)
		}
	}
	if s.rng != nil && len(free) > 1 {
		k := s.rng.IntN(len(free))
		free = append(free[k:], free[:k]...)
	}
	return append(free, waiting...)
}

// busy records a statement that SQLite's busy handler holds: in WAL mode
// only a write can meet SQLITE_BUSY (one connection at a time may write),
// and a statement outside a transaction, or in one that has not read yet,
// waits for the writer inside SQLite and runs when the lock is free (a
// busy timeout longer than the writer's transaction). The worker is
// blocked; the scheduler runs the others and tries the statement again. A
// transaction that has read does not come here: SQLite skips its busy
// handler, and the error reaches the handler (busyNote, retry.go).
func (s *sim) busy(w *worker, st Step, res execResult) {
	st.Kind = StepBlocked
	st.Error = res.Err.Error()
	st.SQLState = pgSQLState(res.Err)
	holder := s.writeLockHolder(w)
	if holder == "" {
		holder = "another connection"
	}
	s.blockSeq++
	w.blockedAt = s.blockSeq
	st.Note = fmt.Sprintf("%s waits: %s holds the write lock, and SQLite lets one connection write at a time (readers never wait); SQLite's busy handler holds the statement until the lock is free", w.name, holder)
	s.record(st)
}

// busyNote says why an SQLITE_BUSY reached w's handler instead of
// waiting: its transaction has read, so waiting could not help.
func (s *sim) busyNote(w *worker, res execResult) string {
	_, code := retryClass(res.Err)
	what := "fails with " + code
	why := ""
	if res.Snapshot {
		why = fmt.Sprintf("another worker committed after %s's transaction first read the ledger, and SQLite never lets a transaction write on a stale snapshot", w.name)
	} else {
		holder := s.writeLockHolder(w)
		if holder == "" {
			holder = "another connection"
		}
		why = fmt.Sprintf("%s holds the write lock, and %s's transaction has already read: waiting cannot help (its snapshot would be stale once %s commits), so SQLite does not wait, whatever the busy timeout", holder, w.name, holder)
	}
	next := "the error reaches the handler, which fails (@retry-on busy would run the transaction again)"
	if word, ok := s.h.retriesOn(RetryBusy); ok {
		next = "the error reaches the handler, whose @retry-on " + word + " runs the transaction again"
	}
	return fmt.Sprintf("%s %s: %s; %s", w.name, what, why, next)
}

// rollback rolls back w's open transaction and records the step (not yet
// given a kind by the caller).
func (s *sim) rollback(w *worker) *Step {
	st := Step{Worker: w.name, SQL: "ROLLBACK"}
	if w.job != nil {
		st.Message, st.Attempt, st.Copy = w.job.msg.m.ID, w.job.attempt, w.job.msg.label()
	}
	res := w.db.exec(s.ctx, "ROLLBACK", nil, false)
	w.db.setInTransaction(false, false)
	if res.Err != nil {
		st.Error = res.Err.Error()
		st.SQLState = pgSQLState(res.Err)
	}
	st.Reverted = s.changes(res.Reverted, false)
	return s.record(st)
}

// stepWorker runs w's next step: a statement, or the ack after the last one.
func (s *sim) stepWorker(w *worker) (outcome, error) {
	j := w.job
	if !j.filterDone {
		j.filterDone = true
		if s.h.Filter && w.filter[j.msg.m.ID] {
			s.record(Step{Kind: StepFilterHit, Worker: w.name, Message: j.msg.m.ID, Attempt: j.attempt, Copy: j.msg.label(),
				Note: w.name + "'s in-process filter has seen " + j.msg.m.ID + ": skip to the ack"})
			j.pc = len(j.stmts)
			return progressed, nil
		}
	}
	if j.pc >= len(j.stmts) {
		s.finishJob(w)
		return finished, nil
	}
	if w.db == nil {
		db, err := s.l.conn(w.name)
		if err != nil {
			return 0, err
		}
		w.db = db
	}
	if s.backsOff(w) {
		return blocked, nil
	}
	stmt := j.stmts[j.pc]
	if stmt.Call != nil {
		return s.stepCall(w, stmt)
	}
	args, nargs := s.bind(stmt, j.msg.m)
	w.db.runsFor(j.msg.m.ID)
	res := w.db.exec(s.ctx, stmt.SQL, nargs, stmt.isQuery())
	if err := s.over(); err != nil {
		return 0, err
	}
	st := Step{Kind: StepSQL, Worker: w.name, Message: j.msg.m.ID, Attempt: j.attempt, Copy: j.msg.label(),
		Statement: j.pc + 1, Line: stmt.Line, SQL: stmt.SQL, Args: args}
	if res.Busy && !w.db.holdsSnapshot() {
		s.busy(w, st, res)
		return blocked, nil
	}
	if res.Waiting {
		s.pgWaiting(w, st, res)
		return blocked, nil
	}
	w.blockedAt = 0
	if res.CommitRolledBack && (stmt.Verb == "COMMIT" || stmt.Verb == "END") {
		res.Err = errCommitRolledBack // pgabort.go
		st.Reverted = s.changes(res.Reverted, false)
	}
	if res.Busy {
		st.Note = s.busyNote(w, res)
	}
	if res.Err != nil && stmt.ContinueOnError {
		st.Error, st.Note = res.Err.Error(), caughtNote(w)
		s.record(st)
		j.pc++
		return s.executed(w)
	}
	if res.Err != nil {
		st.Error = res.Err.Error()
		st.SQLState = pgSQLState(res.Err)
		s.record(st)
		if s.retryTransaction(w, res.Err) {
			return progressed, nil
		}
		s.abort(w)
		return finished, nil
	}
	switch stmt.Verb {
	case "BEGIN":
		w.db.setInTransaction(true, stmt.Immediate)
		j.txStart = j.pc
	case "COMMIT", "END", "ROLLBACK":
		w.db.setInTransaction(false, false)
	default:
		w.db.ranInTransaction(!stmt.isQuery())
	}
	if stmt.isQuery() {
		st.RowsFound = ptr(res.Found)
	} else if !isTxVerb(stmt.Verb) {
		st.RowsAffected = ptr(res.Rows)
	}
	st.Changes = s.changes(res.Changes, w.db.inTransaction())
	if stmt.Verb == "COMMIT" || stmt.Verb == "END" {
		st.Changes = s.changes(res.Committed, false)
	}
	if len(res.Committed) > 0 {
		for i := range st.Changes {
			st.Changes[i].Committed = true
		}
	}
	st.Reverted = s.changes(res.Reverted, false)
	s.record(st)
	j.pc++
	if stmt.Guard == GuardStopIfNoRows && res.Rows == 0 || stmt.Guard == GuardStopIfFound && res.Found > 0 {
		why := "found a row: " + j.msg.m.ID + " was handled before; stop and ack"
		if stmt.Guard == GuardStopIfNoRows {
			why = "no rows changed: " + j.msg.m.ID + " was handled before; stop and ack"
		}
		if w.db.inTransaction() {
			r := s.rollback(w)
			r.Kind, r.Note = StepStop, why
		} else {
			s.record(Step{Kind: StepStop, Worker: w.name, Message: j.msg.m.ID, Attempt: j.attempt, Copy: j.msg.label(), Note: why})
		}
		j.pc = len(j.stmts)
	}
	return s.executed(w)
}

// executed counts a statement w has run (a caught failure too) and plays
// a crash-after fault after it.
func (s *sim) executed(w *worker) (outcome, error) {
	j := w.job
	j.executed++
	if j.fault == FaultCrashAfter && j.executed == j.faultAfter {
		return finished, s.crash(w, StepCrash, fmt.Sprintf("crash-after %d: %s dies after statement %d", j.faultAfter, w.name, j.executed))
	}
	return progressed, nil
}

// abort ends w's job after a failed statement: no ack, and its open
// transaction rolls back.
func (s *sim) abort(w *worker) {
	j := w.job
	aborted := s.record(Step{Kind: StepAbort, Worker: w.name, Message: j.msg.m.ID, Attempt: j.attempt, Copy: j.msg.label(),
		Note: s.abortNote(j.msg.m.ID)}).Index
	if w.db != nil && w.db.inTransaction() {
		r := s.rollback(w)
		r.Kind, r.Note = StepRollback, "the failed handler's transaction rolls back"
	}
	w.job = nil
	s.backOff(j.msg, aborted) // backoff.go
}

// finishJob is the step after the last statement: remember the id in the
// filter, then ack (or the fault that replaces the ack).
func (s *sim) finishJob(w *worker) {
	j := w.job
	id := j.msg.m.ID
	base := Step{Worker: w.name, Message: id, Attempt: j.attempt, Copy: j.msg.label()}
	if s.h.Filter {
		w.remember(id)
	}
	if j.batch { // a partition's record: no ack, the batch goes on (offsets.go)
		w.job = nil
		s.part.handled = true
		return
	}
	switch {
	case j.fault == FaultCrashBeforeAck:
		s.crash(w, StepCrash, "crash-before-ack: "+w.name+" dies after its last statement, before acking")
		return
	case j.fault == FaultCrashAfter && j.executed < j.faultAfter:
		base.Note = fmt.Sprintf("crash-after %d did not fire: the handler ran %d statements; ", j.faultAfter, j.executed)
	}
	w.job = nil
	switch {
	case j.fault == FaultLoseAck:
		base.Kind = StepAckLost
		base.Note += "the ack never reaches the broker: " + id + " stays unacked until its lease ends"
	case (j.leaseExpired || s.now >= j.leaseEnd) && (j.msg.deliveries > j.attempt || j.msg.acked || j.msg.dead):
		// SQS: a delete must carry the most recent receipt handle; with an
		// older one the request succeeds but the message is not deleted.
		base.Kind = StepAckRefused
		base.Note += fmt.Sprintf("the lease ended at tick %d and %s was received again since: %s's receipt handle is no longer the latest, so the broker does not delete it", j.leaseEnd, id, w.name)
	case j.leaseExpired || s.now >= j.leaseEnd:
		// Nobody received it since: the late delete carries the most
		// recent receipt handle, and SQS deletes the message.
		base.Kind = StepAck
		base.Note += fmt.Sprintf("the lease ended at tick %d, but no one received %s since: %s's receipt handle is still the latest, and the broker deletes it", j.leaseEnd, id, w.name)
		j.msg.acked = true
	default:
		base.Kind = StepAck
		base.Note += "the broker deletes " + id
		if len(s.msgs[id].copies) > 1 {
			base.Note += fmt.Sprintf("'s copy %d (each copy is acked on its own)", j.msg.n)
		}
		j.msg.acked = true
	}
	base.Note = strings.TrimSuffix(base.Note, "; ")
	s.record(base)
}

// remember adds a message id to the worker's in-process filter.
func (w *worker) remember(id string) {
	if w.filter == nil {
		w.filter = map[string]bool{}
	}
	w.filter[id] = true
}

// crash kills (or restarts) a worker: its open transaction is rolled back,
// its message is neither processed further nor acked, its filter is lost.
func (s *sim) crash(w *worker, kind, note string) error {
	st := Step{Kind: kind, Worker: w.name, Note: note}
	if w.job != nil {
		st.Message, st.Attempt, st.Copy = w.job.msg.m.ID, w.job.attempt, w.job.msg.label()
	} else if len(w.filter) > 0 {
		st.Note += fmt.Sprintf(" (%d ids forgotten)", len(w.filter))
	}
	s.record(st)
	if w.job != nil && w.db != nil && w.db.inTransaction() {
		r := s.rollback(w)
		r.Kind, r.Note = StepRollback, "the connection closes: the open transaction rolls back"
	}
	w.job = nil
	w.blockedAt = 0
	w.filter = nil
	if s.part != nil {
		s.partitionWorkerDied(w, kind)
	}
	return nil
}

func (s *sim) bind(st *statement, m *Message) ([]Arg, []driver.NamedValue) {
	args := make([]Arg, len(st.Params))
	nargs := make([]driver.NamedValue, len(st.Params))
	for i, p := range st.Params {
		var v any
		switch p {
		case "message_id":
			v = m.ID
		case "amount":
			v = m.Amount
		case "balance":
			v = m.Balance
		case "account_id":
			v = nullable(m.AccountID)
		case "payment_id":
			if m.Kind == KindCredit {
				v = m.BusinessKey()
			}
		case "order_id":
			v = nullable(m.OrderID)
		case "sku":
			v = nullable(m.SKU)
		case "price":
			if m.Kind == KindPrice {
				v = m.Price
			}
		case "version":
			if m.Kind == KindPrice {
				v = m.Version
			}
		case "now":
			v = s.now
		case "offset", "partition":
			v = s.partitionParam(p, m)
		}
		args[i] = Arg{Name: p, Value: v}
		nargs[i] = driver.NamedValue{Name: p, Ordinal: i + 1, Value: v}
	}
	return args, nargs
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func ptr(n int64) *int64 { return &n }

// changes converts hook records for the trace.
func (s *sim) changes(rcs []rowChange, pending bool) []Change {
	if len(rcs) == 0 {
		return nil
	}
	out := make([]Change, len(rcs))
	for i, rc := range rcs {
		c := Change{Table: rc.Table, Op: rc.Op, Pending: pending}
		cols := tableColumns[rc.Table]
		if rc.Before != nil {
			c.Before = rowMap(cols, rc.Before)
			c.Key = rowKey(rc.Table, rc.OldRowID, rc.Before)
		}
		if rc.After != nil {
			c.After = rowMap(cols, rc.After)
			c.Key = rowKey(rc.Table, rc.NewRowID, rc.After)
		}
		out[i] = c
	}
	return out
}

func rowMap(cols []string, vals []any) map[string]any {
	m := make(map[string]any, len(cols))
	for i, c := range cols {
		if i < len(vals) {
			m[c] = vals[i]
		}
	}
	return m
}
