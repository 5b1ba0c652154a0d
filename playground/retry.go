package playground

import (
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// One retry model for both ledgers. A statement that meets a conflict the
// database will not wait out fails, and the driver hands the error to the
// handler as it reports it: on SQLite, SQLITE_BUSY (5) when a transaction
// that has read wants the write lock another connection holds, and
// SQLITE_BUSY_SNAPSHOT (517) when another connection committed after the
// transaction first read; on PostgreSQL, 40001 (a serialization failure)
// and 40P01 (a deadlock). Without @retry-on the handler fails on it: no
// ack, and the broker delivers the message again after its lease.
//
// @retry-on names the errors on which the consumer's retry loop rolls the
// transaction back and runs it again from its BEGIN: busy (SQLite's),
// serialization_failure (PostgreSQL's), or conflict for both, so that one
// handler script asks for the same retry on either ledger. A delivery
// retries at most maxTransactionRetries times; each retry is a step. After
// SQLITE_BUSY the retry backs off while another connection holds the
// write lock (a retry at once would only meet the same error), as a real
// retry loop sleeps between attempts.
//
// A wait SQLite does itself is no error and needs no directive: a
// statement that needs the write lock outside a transaction, or first in
// a transaction that has not read, is held by SQLite's busy handler until
// the lock is free (worker.go's busy: the worker is blocked and the
// scheduler runs the others), as on a connection whose busy timeout is
// longer than any wait in a schedule.

// Words @retry-on takes.
const (
	RetryBusy          = "busy"                  // SQLITE_BUSY, SQLITE_BUSY_SNAPSHOT
	RetrySerialization = "serialization_failure" // PostgreSQL's 40001, 40P01
	RetryConflict      = "conflict"              // both
)

// retryWords are the words @retry-on takes, with what each covers, in the
// order its error message lists them.
var retryWords = []struct{ word, covers string }{
	{RetryBusy, "SQLite's SQLITE_BUSY and SQLITE_BUSY_SNAPSHOT"},
	{RetrySerialization, "PostgreSQL's 40001 and 40P01"},
	{RetryConflict, "all four, on either ledger"},
}

// retryWordList is "busy (…), serialization_failure (…) or conflict (…)".
func retryWordList() string {
	parts := make([]string, len(retryWords))
	for i, w := range retryWords {
		parts[i] = w.word + " (" + w.covers + ")"
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// maxTransactionRetries bounds @retry-on's retries per delivery.
const maxTransactionRetries = 5

// parseRetryOn reads @retry-on's argument: one or more words, separated by
// spaces or commas.
func parseRetryOn(arg string) ([]string, error) {
	fields := strings.FieldsFunc(arg, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' })
	if len(fields) == 0 {
		return nil, fmt.Errorf("@retry-on needs the errors to retry on: %s", retryWordList())
	}
	var out []string
	for _, f := range fields {
		known := false
		for _, w := range retryWords {
			known = known || f == w.word
		}
		if !known {
			return nil, fmt.Errorf("@retry-on takes %s, not %q", retryWordList(), clip(f))
		}
		if contains(out, f) {
			return nil, fmt.Errorf("@retry-on names %s twice", f)
		}
		out = append(out, f)
	}
	return out, nil
}

// retryClass is the @retry-on word whose errors include err (RetryBusy,
// RetrySerialization), and the error in words; "" when no retry covers it.
func retryClass(err error) (class, what string) {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY {
		return RetryBusy, sqliteBusyName(se.Code())
	}
	switch pgSQLState(err) {
	case "40001":
		return RetrySerialization, "a serialization failure (40001)"
	case "40P01":
		return RetrySerialization, "a deadlock (40P01)"
	}
	return "", ""
}

// sqliteBusyName names an SQLITE_BUSY result code with its number, as
// SQLite's documentation does: "SQLITE_BUSY_SNAPSHOT (517)".
func sqliteBusyName(code int) string {
	switch code {
	case sqlite3.SQLITE_BUSY:
		return "SQLITE_BUSY (5)"
	case sqlite3.SQLITE_BUSY_SNAPSHOT:
		return "SQLITE_BUSY_SNAPSHOT (517)"
	}
	return fmt.Sprintf("SQLITE_BUSY (%d)", code)
}

// retriesOn is the word of the handler's @retry-on that covers class, if any.
func (h *Handler) retriesOn(class string) (string, bool) {
	for _, w := range h.RetryOn {
		if w == class || w == RetryConflict {
			return w, true
		}
	}
	return "", false
}

// retryTransaction: a handler whose @retry-on covers err, and whose
// transaction failed with it, rolls back and runs again from its BEGIN, as
// a real consumer's retry loop would. It reports whether it did; when the
// retries are spent it says so, and the handler fails.
func (s *sim) retryTransaction(w *worker, err error) bool {
	j := w.job
	class, what := retryClass(err)
	if class == "" {
		return false
	}
	word, ok := s.h.retriesOn(class)
	if !ok || j.txStart >= j.pc || j.stmts[j.txStart].Verb != "BEGIN" {
		return false
	}
	for _, st := range j.stmts[j.txStart:j.pc] {
		if isTxEnd(st.Verb) {
			return false // the failed statement ran outside the transaction
		}
	}
	if j.retries >= maxTransactionRetries {
		s.record(Step{Kind: StepNote, Worker: w.name, Message: j.msg.m.ID, Attempt: j.attempt, Copy: j.msg.label(),
			Note: fmt.Sprintf("@retry-on %s: %s has retried its transaction %d times, the most it will; it gives up", word, w.name, j.retries)})
		return false
	}
	j.retries++
	if w.db.inTransaction() {
		r := s.rollback(w)
		r.Kind, r.Note = StepRollback, w.name+"'s transaction rolls back after "+what
	}
	s.record(Step{Kind: StepNote, Worker: w.name, Message: j.msg.m.ID, Attempt: j.attempt, Copy: j.msg.label(),
		Note: fmt.Sprintf("@retry-on %s: %s runs its transaction again from statement %d (retry %d)", word, w.name, j.txStart+1, j.retries)})
	j.pc = j.txStart
	j.backoff = class == RetryBusy
	return true
}

// backsOff is the step of a worker whose retry after SQLITE_BUSY waits
// for the write lock: it reports whether the worker must wait (another
// connection still holds the lock), and records that it does.
func (s *sim) backsOff(w *worker) bool {
	j := w.job
	if !j.backoff {
		return false
	}
	holder := s.writeLockHolder(w)
	if holder == "" {
		j.backoff = false
		return false
	}
	s.blockSeq++
	w.blockedAt = s.blockSeq
	s.record(Step{Kind: StepNote, Worker: w.name, Message: j.msg.m.ID, Attempt: j.attempt, Copy: j.msg.label(),
		Note: fmt.Sprintf("%s backs off before its retry: %s holds the write lock, and a retry now would meet SQLITE_BUSY again", w.name, holder)})
	return true
}

// writeLockHolder names the other worker whose transaction holds the
// write lock; "" when none does.
func (s *sim) writeLockHolder(except *worker) string {
	for _, o := range s.workers {
		if o != except && o.db != nil && o.db.holdsWriteLock() {
			return o.name
		}
	}
	return ""
}
