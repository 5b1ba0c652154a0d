package playground

import (
	"errors"
	"fmt"
)

// A consumer that catches a statement's error and goes on. In SQLite a
// failed statement is undone alone and its transaction goes on; in
// PostgreSQL the whole transaction is aborted: every later statement fails
// with 25P02 ("current transaction is aborted, commands ignored until end of
// transaction block"), and its COMMIT answers ROLLBACK. So the same handler
// that credits twice on SQLite (it catches the duplicate id and commits the
// effect anyway) keeps nothing on PostgreSQL, and the directive
// @continue-on-error is what makes both reachable:
//
//	BEGIN;
//	UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;
//	INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);
//	@continue-on-error
//	COMMIT;
//
// A COMMIT that PostgreSQL answers with ROLLBACK is a failure of the
// handler, as pgx reports it (ErrTxCommitRollback: "PostgreSQL accepts
// COMMIT on aborted transactions, but it is treated as ROLLBACK"): no ack.

// directiveContinueOnError is the directive's name.
const directiveContinueOnError = "continue-on-error"

// errCommitRolledBack is a COMMIT PostgreSQL answered with ROLLBACK.
var errCommitRolledBack = errors.New("COMMIT answered ROLLBACK: the transaction had failed, so PostgreSQL rolled it back instead and kept nothing of it")

// continueOnError marks the last statement of stmts (a section so far) as
// one whose error the consumer catches.
func continueOnError(stmts []*statement, arg string) error {
	if arg != "" {
		return fmt.Errorf("@%s takes no argument", directiveContinueOnError)
	}
	if len(stmts) == 0 {
		return fmt.Errorf("@%s must follow a statement", directiveContinueOnError)
	}
	last := stmts[len(stmts)-1]
	if isTxVerb(last.Verb) || last.Call != nil {
		return fmt.Errorf("@%s must follow SELECT, INSERT, UPDATE, DELETE or REPLACE (line %d is %s)", directiveContinueOnError, last.Line, last.Verb)
	}
	if last.ContinueOnError {
		return fmt.Errorf("the statement on line %d already has @%s", last.Line, directiveContinueOnError)
	}
	last.ContinueOnError = true
	return nil
}

// caughtNote says what a caught error leaves: on PostgreSQL, an aborted
// transaction.
func caughtNote(w *worker) string {
	note := w.name + " catches the error and goes on (@continue-on-error)"
	if w.db != nil && w.db.pg != nil && w.db.pg.conn.TxStatus() == 'E' {
		note += "; PostgreSQL has aborted the transaction: every statement until its end fails with 25P02, and its COMMIT rolls back"
	}
	return note
}
