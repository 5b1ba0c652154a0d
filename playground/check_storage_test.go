package playground

import (
	"context"
	"strings"
	"testing"
)

// TestCheck_RetentionRuleSeesIdsInAnyTable: dedupe-retention's rule (an
// id is gone max_id_age ticks after it was recorded) holds wherever the
// handler remembers ids: one that keeps them in outbox or inbox and never
// prunes is refused, naming the table; one that prunes, but after 500
// hours, is told it keeps ids too long, not that it never prunes.
func TestCheck_RetentionRuleSeesIdsInAnyTable(t *testing.T) {
	relaxCheckTimeout(t)
	ex := exerciseByID(t, "dedupe-retention")
	keep := func(table, col string, prune string) string {
		return "@on credit\nBEGIN;\n" + prune + "INSERT INTO " + table + "(message_id, " + col + ") VALUES (:message_id, :now) ON CONFLICT DO NOTHING;\n@stop-if-no-rows\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n"
	}
	for _, c := range []struct{ name, source, want string }{
		{"outbox", keep("outbox", "created_at", ""), "recorded in outbox at tick 0 is still stored at tick 192, after the handler ran at tick 192: the handler never deletes from outbox"},
		{"inbox", keep("inbox", "received_at", ""), "recorded in inbox at tick 0 is still stored at tick 192, after the handler ran at tick 192: the handler never deletes from inbox"},
		{"prunes after 500 h", keep("processed_messages", "processed_at", "DELETE FROM processed_messages WHERE processed_at < :now - 500;\n"),
			"the handler prunes processed_messages, but keeps ids longer than 192 hours"},
	} {
		res, err := Check(context.Background(), ex, c.source)
		if err != nil {
			t.Fatal(err)
		}
		ce := res.Counterexample
		if res.Passed || ce == nil || ce.Invariant != RuleBoundedStorage || !strings.Contains(ce.Violation, c.want) {
			t.Errorf("%s: passed %v, counterexample %+v; want %s: %q", c.name, res.Passed, ce, RuleBoundedStorage, c.want)
		}
	}
}
