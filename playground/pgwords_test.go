package playground

import (
	"strings"
	"testing"
)

// On a PostgreSQL ledger the notes use PostgreSQL's words: a prune that
// meets a worker's row lock says so, not SQLite's "write lock", and no step
// of the race speaks of SQLITE_BUSY or BEGIN IMMEDIATE.
func TestPostgresLedger_NotesUsePostgreSQLsWords(t *testing.T) {
	pg := testPostgresLedgers(t, 1)
	const touch = "@on credit\nBEGIN;\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now) ON CONFLICT (message_id) DO UPDATE SET processed_at = :now;\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n"
	tr := runOnPostgres(t, pg, "postgres-rc", "concurrent-duplicate", "touch", touch,
		"deliver msg-1 lose-ack; advance 50; start msg-1 on A; step A 2; prune older-than 1; finish A")
	var prune *Step
	for i, st := range tr.Handlers[0].Steps {
		if st.Kind == StepPrune {
			prune = &tr.Handlers[0].Steps[i]
		}
	}
	if prune == nil || !strings.Contains(prune.Note, "open transaction holds rows") || strings.Contains(prune.Note, "write lock") {
		t.Errorf("the prune's note on PostgreSQL: %+v", prune)
	}
	for _, ledger := range []string{"postgres-rc", "postgres-rr", "postgres-serializable"} {
		tr := runOnPostgres(t, pg, ledger, "concurrent-duplicate", "dedupe-tx", "", raceScript)
		for _, st := range tr.Handlers[0].Steps {
			for _, sqliteOnly := range []string{"SQLITE_BUSY", "write lock", "BEGIN IMMEDIATE", "SQLite"} {
				if strings.Contains(st.Note, sqliteOnly) || strings.Contains(st.Error, sqliteOnly) || strings.Contains(st.SQL, sqliteOnly) {
					t.Errorf("%s: step %d speaks of %q: %+v", ledger, st.Index, sqliteOnly, st)
				}
			}
		}
	}
}
