package playground

import (
	"context"
	"strings"
	"testing"
)

// TestCheck_AFailureTheRedeliveryHealsIsNoPoisonMessage: a handler whose
// loser of two overlapping copies fails once (a plain INSERT of the id,
// after a lookup inside or outside the transaction) is redelivered, finds
// the id and acks: no effect is lost or doubled, and the checker passes
// it, as lesson 7's warning (a failure instead of a clean stop) allows. A
// handler whose every redelivery fails (the plain INSERT with no lookup,
// after a lost ack) is a poison message, and the checker says so.
func TestCheck_AFailureTheRedeliveryHealsIsNoPoisonMessage(t *testing.T) {
	relaxCheckTimeout(t)
	lookupInTx := "@on credit\nBEGIN;\nSELECT 1 FROM processed_messages WHERE message_id = :message_id;\n@stop-if-found\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n"
	lookupOutside := "@on credit\nSELECT 1 FROM processed_messages WHERE message_id = :message_id;\n@stop-if-found\nBEGIN;\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n"
	noLookup := "@on credit\nBEGIN;\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n"
	for _, id := range []string{"race-check-then-insert", "reorder-mark", "dedupe-credit"} {
		ex := exerciseByID(t, id)
		for name, src := range map[string]string{"lookup in the transaction": lookupInTx, "lookup outside it": lookupOutside} {
			res, err := Check(context.Background(), ex, src)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Passed {
				t.Errorf("%s, %s: refused: %+v", id, name, res.Counterexample)
			}
		}
		res, err := Check(context.Background(), ex, noLookup)
		if err != nil {
			t.Fatal(err)
		}
		ce := res.Counterexample
		if res.Passed || ce == nil || ce.Invariant != RuleAckedNotRetried || !strings.Contains(ce.Violation, "every redelivery fails the same way") ||
			!strings.Contains(ce.Violation, "a poison message") {
			t.Errorf("%s, no lookup: passed %v, counterexample %+v", id, res.Passed, ce)
		}
	}

	// The engine agrees: the run in which the loser failed, and one more
	// redelivery, ends ok.
	h, err := ParseHandler("mine", lookupInTx)
	if err != nil {
		t.Fatal(err)
	}
	script := "start msg-1 on A; expire msg-1; start msg-1 on B; finish B; finish A; redeliver msg-1"
	tr, err := Run(context.Background(), Request{Scenario: "concurrent-duplicate", Script: script, Custom: []*Handler{h}})
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.Handlers[0]; got.Verdict != VerdictOK {
		t.Errorf("%s: %s %+v %+v", script, got.Verdict, got.Violations, got.InFlight)
	}
}
