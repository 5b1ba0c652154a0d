package playground

import (
	"testing"
)

// A reset notices every commit since the last one by the keeper's data
// version, the commits the mirror never saw included (a connection with no
// change hooks), and rests when nothing committed: each round's ledger is
// fresh, seen from the keeper and from a worker's connection.
func TestLedgerPool_ResetSeesEveryCommit(t *testing.T) {
	l, tmpl := openScenarioLedger(t, "lost-ack")
	defer l.close()
	l.key = poolKey{tmpl, false}
	want := dumpLedger(t, l.pinned.conn, false)
	// A connection of its own, without hooks: the mirror never hears of
	// its commits, so the ledger's dirty tables stay empty.
	unseen, err := sqliteDriver.Open(fileURI(l.path))
	if err != nil {
		t.Fatal(err)
	}
	defer unseen.Close()
	for round, q := range []string{
		"", // the first reset opens the keeper
		"INSERT INTO shipments(order_id, message_id, shipped_at) VALUES ('o1', 'm1', 1)",
		"", // nothing committed: nothing to do
		"UPDATE accounts SET balance = balance + 1",
		"DELETE FROM accounts",
		"",
		"INSERT INTO processed_messages VALUES ('m9', 9)",
	} {
		if q != "" {
			if err := execRaw(unseen, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if len(l.dirty) > 0 {
				t.Fatalf("the mirror saw %v", l.dirty)
			}
		}
		before := l.keeper
		if err := l.resetRows(tmpl); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if before != nil && l.keeper != before {
			t.Fatalf("round %d: the keeper was replaced", round)
		}
		for _, c := range []*dbConn{l.pinned, {conn: l.keeper.conn}, {conn: unseen}} {
			if got := dumpLedger(t, c.conn, false); got != want {
				t.Fatalf("round %d (after %q): the reset ledger is not fresh\n got:\n%s\nwant:\n%s", round, q, got, want)
			}
		}
	}
}
