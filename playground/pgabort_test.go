package playground

import (
	"fmt"
	"strings"
	"testing"
)

// Handlers that catch a statement's error and go on (@continue-on-error):
// the duplicate id's INSERT fails on the redelivery, and the handler
// carries on.
const (
	// catchThenCommit catches the duplicate's error just before COMMIT.
	catchThenCommit = `BEGIN;
UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;
INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);
@continue-on-error
COMMIT;`
	// catchThenUpdate catches it and runs the effect after it.
	catchThenUpdate = `BEGIN;
INSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);
@continue-on-error
UPDATE accounts SET balance = balance + :amount WHERE id = :account_id;
COMMIT;`
	redelivery = "deliver msg-1 lose-ack; redeliver msg-1"
)

// On SQLite a failed statement alone is undone and the transaction goes
// on, so catching the duplicate credits twice; on PostgreSQL (every
// isolation level) the transaction is aborted: the next statement fails
// with 25P02, or COMMIT answers ROLLBACK (undoing the credit), and the
// handler fails without an ack, having kept nothing of the redelivery.
func TestPostgres_ContinueOnErrorMeetsTheAbortedTransaction(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	const firstDelivery = `
		A deliver
		A sql BEGIN
		A sql %s rows=1
		A sql %s rows=1
		A sql COMMIT
		A ack-lost
		 clock
		 lease-expired
		A deliver
		A sql BEGIN
	`
	for _, tc := range []struct {
		name, source, first, second, redelivered string
	}{
		{"the error caught before COMMIT", catchThenCommit, "UPDATE", "INSERT", `
			A sql UPDATE rows=1
			A sql INSERT error=23505
			A sql COMMIT error=` + errCommitRolledBack.Error() + `
			A abort`},
		{"the effect after the caught error", catchThenUpdate, "INSERT", "UPDATE", `
			A sql INSERT error=23505
			A sql UPDATE error=25P02
			A abort
			A rollback ROLLBACK`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sqlite := runOnPostgres(t, pg, "sqlite", "lost-ack", "mine", tc.source, redelivery).Handlers[0]
			if sqlite.Verdict != VerdictDuplicate || balanceOf(sqlite) != "[acc-1=200]" || !caught(sqlite) {
				t.Errorf("SQLite: %s, %s, caught %v; want the catch to credit twice", sqlite.Verdict, balanceOf(sqlite), caught(sqlite))
			}
			for _, ledger := range []string{"postgres-rc", "postgres-rr", "postgres-serializable"} {
				h := runOnPostgres(t, pg, ledger, "lost-ack", "mine", tc.source, redelivery).Handlers[0]
				assertSteps(t, h, strings.TrimRight(fmt.Sprintf(firstDelivery, tc.first, tc.second), "\n\t")+tc.redelivered)
				if h.Verdict != VerdictPending || balanceOf(h) != "[acc-1=150]" || !caught(h) {
					t.Errorf("%s: %s, %s, caught %v; want msg-1 owed again, credited once", ledger, h.Verdict, balanceOf(h), caught(h))
				}
				if tc.source == catchThenCommit {
					commit := h.Steps[len(h.Steps)-2]
					if len(commit.Reverted) != 1 || commit.Reverted[0].Table != "accounts" {
						t.Errorf("%s: the COMMIT answered ROLLBACK undid %+v, want the credit", ledger, commit.Reverted)
					}
				}
			}
		})
	}
}

// caught reports a step whose error the handler caught, saying, on
// PostgreSQL, that the transaction is aborted.
func caught(h *HandlerTrace) bool {
	for _, st := range h.Steps {
		if st.Error != "" && strings.HasPrefix(st.Note, "A catches the error and goes on") {
			return strings.Contains(st.Note, "25P02") == strings.Contains(st.Error, "SQLSTATE")
		}
	}
	return false
}

func TestParseHandler_ContinueOnError(t *testing.T) {
	for _, tc := range []struct{ source, err string }{
		{catchThenCommit, ""},
		{"SELECT 1 FROM accounts;\n@continue-on-error\n@stop-if-found\nUPDATE accounts SET balance = 0;", ""},
		{"@continue-on-error\nUPDATE accounts SET balance = 0;", "line 1: @continue-on-error must follow a statement"},
		{"BEGIN;\n@continue-on-error\nUPDATE accounts SET balance = 0;\nCOMMIT;", "line 2: @continue-on-error must follow SELECT, INSERT, UPDATE, DELETE or REPLACE (line 1 is BEGIN)"},
		{"UPDATE accounts SET balance = 0;\n@continue-on-error\n@continue-on-error", "line 3: the statement on line 1 already has @continue-on-error"},
		{"UPDATE accounts SET balance = 0;\n@continue-on-error always", "line 2: @continue-on-error takes no argument"},
	} {
		h, err := ParseHandler("mine", tc.source)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.source, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: %v, want %q", tc.source, err, tc.err)
		case tc.err == "" && !h.sections["*"][0].ContinueOnError && !h.sections["*"][2].ContinueOnError:
			t.Errorf("%q: no statement carries it", tc.source)
		}
	}
}
