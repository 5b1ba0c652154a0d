package playground

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// providerVerdicts extends TestRun_Verdicts (each scenario's default script
// against every built-in handler): the provider's handlers in the other
// scenarios, and every handler in the provider's scenarios.
var providerVerdicts = func() map[string]map[string]string {
	const (
		ok   = VerdictOK
		dup  = VerdictDuplicate
		lost = VerdictLost
	)
	providerHandlers := []string{"charge-no-key", "charge-key", "charge-after-commit", "charge-inbox", "charge-outbox",
		"email-in-tx", "email-after-commit", "email-outbox"}
	all := func(v string) map[string]string {
		m := map[string]string{}
		for _, h := range providerHandlers {
			m[h] = v
		}
		return m
	}
	with := func(m map[string]string, kv ...string) map[string]string {
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	// A ledger-only handler in a provider scenario never charges or
	// emails: its credit is lost outside the database.
	ledgerOnly := func(v string) map[string]string {
		return map[string]string{"increment": v, "set-value": v, "dedupe-tx": v, "conditional": v, "check-then-insert": v,
			"mark-before": v, "mark-after": v, "memory-filter": v, "filter-dedupe": v, "dedupe-key": v, "versioned-set": v,
			"auto-commit-poll": v, "auto-commit-timer": v, "commit-after": v, "offset-tx": v}
	}
	return map[string]map[string]string{
		// Every message of the partition is a credit these handlers apply once.
		"partition-crash": all(ok),
		"lost-ack":        all(ok), "crash-before-ack": all(ok), "lease-expiry": all(ok), "webhook-retry": all(ok),
		"concurrent-duplicate": all(ok), "topic-replay": all(ok), "restart-filter": all(ok),
		// The dedupe rows are pruned: a ledger keyed on them applies the credit again;
		// the inbox and outbox rows are not pruned.
		"early-prune": with(all(dup), "charge-inbox", ok, "charge-outbox", ok, "email-outbox", ok),
		"dlq-redrive": with(all(dup), "charge-inbox", ok, "charge-outbox", ok, "email-outbox", ok),
		// Two message ids, one payment: every one of them keys its ledger on the message id.
		"producer-retry": all(dup),
		// A ship message is shipped by its state guard, and charges nothing.
		"order-shipping": all(ok), "never-paid": all(ok),
		// crash-after 4 lands after the charge or the email, before the commit.
		"crash-mid-handler": with(all(ok), "charge-no-key", dup, "email-in-tx", dup),
		"card-charge": with(with(ledgerOnly(lost), providerHandlers[0], dup, providerHandlers[1], ok, providerHandlers[2], ok,
			providerHandlers[3], ok, providerHandlers[4], ok), "email-in-tx", lost, "email-after-commit", lost, "email-outbox", lost),
		// offset-tx is written for a partition: on a queue the redelivery applies its credit again.
		"receipt-email": with(ledgerOnly(lost), "offset-tx", dup, "mark-after", dup, "charge-no-key", dup, "charge-key", lost, "charge-after-commit", lost,
			"charge-inbox", lost, "charge-outbox", lost, "email-in-tx", dup, "email-after-commit", lost, "email-outbox", ok),
	}
}()

// mergeVerdicts adds more's rows to want.
func mergeVerdicts(want, more map[string]map[string]string) {
	for sc, row := range more {
		if want[sc] == nil {
			want[sc] = map[string]string{}
		}
		for h, v := range row {
			want[sc][h] = v
		}
	}
}

// outsideCounts counts the charges and emails per message in a handler's
// final records.
func outsideCounts(ht *HandlerTrace) (charges, emails map[string]int) {
	charges, emails = map[string]int{}, map[string]int{}
	for _, tr := range ht.Ledger {
		for _, r := range tr.Rows {
			switch tr.Table {
			case ChargesTable:
				charges[r.Values[3].(string)]++
			case EmailsTable:
				emails[r.Values[2].(string)]++
			}
		}
	}
	return charges, emails
}

// TestProvider_Verdicts: each story of lesson 15, with the charges and
// emails the verdict counts.
func TestProvider_Verdicts(t *testing.T) {
	tests := []struct {
		name, scenario, handler, script string
		verdict                         string
		charges, emails                 int    // of pay-1
		detail                          string // in the first violation
	}{
		{"NoKeyCrashBeforeCommit", "card-charge", "charge-no-key", "deliver pay-1 crash-after 3; redeliver pay-1", VerdictDuplicate, 2, 0, "pay-1 was charged 2 times at the provider"},
		{"KeyWithinLifetime", "card-charge", "charge-key", "deliver pay-1 crash-after 3; redeliver pay-1", VerdictOK, 1, 0, ""},
		{"KeyAfterLifetime", "card-charge", "charge-key", "deliver pay-1 crash-after 3; advance 30; redeliver pay-1", VerdictDuplicate, 2, 0, "charged 2 times"},
		{"KeyJustInsideLifetime", "card-charge", "charge-key", "deliver pay-1 crash-after 3; advance 22; redeliver pay-1", VerdictOK, 1, 0, ""},
		{"KeyRedrivenAfterDeadLetter", "card-charge", "charge-key",
			"deliver pay-1 crash-after 3; redeliver pay-1 crash-after 3; redeliver pay-1 crash-after 3; redeliver pay-1; advance 72; redrive pay-1", VerdictDuplicate, 2, 0, "charged 2 times"},
		{"DeadLetteredOnceCharged", "card-charge", "charge-key",
			"deliver pay-1 crash-after 3; redeliver pay-1 crash-after 3; redeliver pay-1 crash-after 3; redeliver pay-1", VerdictDeadLettered, 1, 0, ""},
		{"ChargeAfterCommitCrash", "card-charge", "charge-after-commit", "deliver pay-1 crash-after 4; redeliver pay-1", VerdictLost, 0, 0, "no charge was made for it"},
		{"InboxCrashAfterCharge", "card-charge", "charge-inbox", "deliver pay-1 crash-after 4; redeliver pay-1", VerdictOK, 1, 0, ""},
		{"InboxAfterLifetime", "card-charge", "charge-inbox", "deliver pay-1 crash-after 4; advance 30; redeliver pay-1", VerdictDuplicate, 2, 0, "charged 2 times"},
		{"OutboxCrashBeforeRelay", "card-charge", "charge-outbox", "deliver pay-1 crash-after 4; redeliver pay-1", VerdictOK, 1, 0, ""},
		{"OutboxCrashAfterCharge", "card-charge", "charge-outbox", "deliver pay-1 crash-after 6; redeliver pay-1", VerdictOK, 1, 0, ""},
		{"OutboxAfterLifetime", "card-charge", "charge-outbox", "deliver pay-1 crash-after 6; advance 30; redeliver pay-1", VerdictDuplicate, 2, 0, "charged 2 times"},
		{"NotYetRedelivered", "card-charge", "charge-after-commit", "deliver pay-1 crash-after 4", VerdictPending, 0, 0, ""},
		{"EmailInTx", "receipt-email", "email-in-tx", "deliver pay-1 crash-after 4; redeliver pay-1", VerdictDuplicate, 0, 2, "receipt was emailed 2 times"},
		{"EmailAfterCommit", "receipt-email", "email-after-commit", "deliver pay-1 crash-after 4; redeliver pay-1", VerdictLost, 0, 0, "its receipt was never sent"},
		{"EmailOutboxCrashBeforeSend", "receipt-email", "email-outbox", "deliver pay-1 crash-after 4; redeliver pay-1", VerdictOK, 0, 1, ""},
		{"EmailOutboxAtLeastOnce", "receipt-email", "email-outbox", "deliver pay-1 crash-after 6; redeliver pay-1", VerdictDuplicate, 0, 2, "an email has no idempotency key"},
		{"EmailOutboxNoCrash", "receipt-email", "email-outbox", "deliver pay-1 lose-ack; redeliver pay-1; deliver pay-2", VerdictOK, 0, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Run(context.Background(), Request{Scenario: tt.scenario, Handlers: []string{tt.handler}, Script: tt.script})
			if err != nil {
				t.Fatal(err)
			}
			ht := tr.Handlers[0]
			if ht.Verdict != tt.verdict {
				t.Errorf("verdict %s, want %s (violations %+v)", ht.Verdict, tt.verdict, ht.Violations)
			}
			charges, emails := outsideCounts(ht)
			if charges["pay-1"] != tt.charges || emails["pay-1"] != tt.emails {
				t.Errorf("pay-1 charged %d times, emailed %d times; want %d and %d", charges["pay-1"], emails["pay-1"], tt.charges, tt.emails)
			}
			if tt.detail != "" && (len(ht.Violations) == 0 || !strings.Contains(ht.Violations[0].Detail, tt.detail)) {
				t.Errorf("violations %+v, want one saying %q", ht.Violations, tt.detail)
			}
			// The ledger's own effect is in every settled story exactly once.
			if ht.Verdict != VerdictDeadLettered && ht.Verdict != VerdictPending && ht.Actual[0] != ht.Expected[0] {
				t.Errorf("ledger %v, expected %v", ht.Actual, ht.Expected)
			}
		})
	}
}

// TestProvider_StepsSayWhatHappened: the trace tells in words what the
// provider did, and a rollback does not undo a charge.
func TestProvider_StepsSayWhatHappened(t *testing.T) {
	tr, err := Run(context.Background(), Request{Scenario: "card-charge", Handlers: []string{"charge-key"},
		Script: "deliver pay-1 crash-after 3; redeliver pay-1; advance 30; publish pay-1"})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	rolledBack := false
	for _, st := range tr.Handlers[0].Steps {
		if st.Kind == StepProvider {
			notes = append(notes, st.Note)
		}
		rolledBack = rolledBack || st.Kind == StepRollback
	}
	want := []string{"charged 50.00 with key pay-1 (ch_1)", "provider returned the first result for key pay-1 (ch_1, made at tick 0 for pay-1): no new charge"}
	if len(notes) != 2 || notes[0] != want[0] || notes[1] != want[1] {
		t.Errorf("provider steps %q, want %q", notes, want)
	}
	if !rolledBack {
		t.Error("the crash rolled nothing back")
	}
	// The republished copy, after the key's lifetime, finds the dedupe row:
	// the dedupe table outlives the key, and no third call is made.
	if c, _ := outsideCounts(tr.Handlers[0]); c["pay-1"] != 1 {
		t.Errorf("pay-1 charged %d times", c["pay-1"])
	}
	tr, err = Run(context.Background(), Request{Scenario: "card-charge", Handlers: []string{"charge-key"}, Script: "deliver pay-1 crash-after 3; advance 30; redeliver pay-1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range tr.Handlers[0].Steps {
		if st.Kind == StepProvider && st.Attempt == 2 && !strings.Contains(st.Note, "a new charge, because the key is 30 hours old and the provider forgets keys after 24") {
			t.Errorf("the charge after the key's lifetime says %q", st.Note)
		}
	}
}

// TestProvider_KeyReusedWithOtherParameters: the provider refuses a key
// it holds for another amount, and the handler fails without acking.
func TestProvider_KeyReusedWithOtherParameters(t *testing.T) {
	h, err := ParseHandler("one-key", "@on credit\nCALL provider.charge(:amount, key => :account_id);\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Run(context.Background(), Request{Scenario: "card-charge", Custom: []*Handler{h}, Script: "deliver pay-1; deliver pay-2"})
	if err != nil {
		t.Fatal(err)
	}
	ht := tr.Handlers[0]
	var refused, aborted bool
	for _, st := range ht.Steps {
		refused = refused || st.Kind == StepProvider && strings.Contains(st.Error, "key acc-1 was first used to charge 50.00")
		aborted = aborted || st.Kind == StepAbort && st.Message == "pay-2"
	}
	if !refused || !aborted || ht.Verdict != VerdictPending {
		t.Errorf("refused %v, aborted %v, verdict %s; want a refusal, an abort and pay-2 pending", refused, aborted, ht.Verdict)
	}
}

// TestProvider_OutsideWorldIsPartOfTheState: two runs with the same rows
// but different charges are different states for the explorer.
func TestProvider_OutsideWorldIsPartOfTheState(t *testing.T) {
	sc, _ := LookupScenario("card-charge")
	a, b := newEffectLedger(sc), newEffectLedger(sc)
	b.outside.charges = append(b.outside.charges, outsideRecord{message: "pay-1", amount: 5000})
	if a.keyString() == b.keyString() {
		t.Error("a charge does not change the state key")
	}
	c := b.clone()
	c.outside.charges = append(c.outside.charges, outsideRecord{message: "pay-1"})
	if len(b.outside.charges) != 1 {
		t.Error("a clone shares its charges with the original")
	}
}

func TestParseHandler_CallErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"UnknownTarget", "CALL bank.wire(:amount);", `line 1: CALL can reach provider.charge or email.send, not "bank.wire"`},
		{"NoParens", "CALL provider.charge;", "line 1: CALL needs a target and its arguments in parentheses"},
		{"Literal", "CALL provider.charge(100);", `line 1: a CALL argument is a parameter (:message_id`},
		{"UnknownParam", "CALL email.send(:email);", `not ":email"`},
		{"KeyOnEmail", "CALL email.send(:account_id, key => :message_id);", "email.send: unexpected"},
		{"KeyFirst", "CALL provider.charge(key => :message_id);", "provider.charge: unexpected"},
		{"TwoAmounts", "CALL provider.charge(:amount, :balance);", "provider.charge takes one argument before any key"},
		{"Empty", "CALL email.send();", "email.send needs an argument"},
		{"GuardAfterCall", "CALL email.send(:account_id);\n@stop-if-no-rows", "line 2: @stop-if-no-rows must follow INSERT, UPDATE, DELETE or REPLACE (line 1 is CALL)"},
		{"Trailing", "CALL email.send(:account_id) now;", "CALL needs a target and its arguments in parentheses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseHandler("mine", tt.src)
			var ie *InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v; want an InputError containing %q", err, tt.want)
			}
		})
	}
	h, err := ParseHandler("mine", "call   provider.charge( :amount ,  key=>:payment_id ) ;")
	if err != nil {
		t.Fatal(err)
	}
	c := h.sections["*"][0].Call
	if c == nil || c.Target != callCharge || c.Arg != "amount" || c.Key != "payment_id" {
		t.Errorf("parsed %+v", c)
	}
}

// The reference lists every CALL target with an example that parses and
// uses it.
func TestReference_CallsParse(t *testing.T) {
	ref := Reference()
	if len(ref.Calls) != len(callUsage) {
		t.Fatalf("%d calls in the reference, %d targets", len(ref.Calls), len(callUsage))
	}
	for _, c := range ref.Calls {
		h, err := ParseHandler("example", c.Example)
		if err != nil {
			t.Errorf("%s: its example does not parse: %v", c.Name, err)
			continue
		}
		used := false
		for _, st := range h.sections[KindCredit] {
			used = used || st.Call != nil && st.Call.Target == c.Name
		}
		if !used || !strings.HasPrefix(c.Usage, "CALL "+c.Name+"(") || c.Meaning == "" {
			t.Errorf("%s: usage %q, example does not use it (%v) or no meaning", c.Name, c.Usage, used)
		}
		if _, err := ParseHandler("usage", c.Usage+";"); err != nil {
			t.Errorf("%s: its usage does not parse: %v", c.Name, err)
		}
	}
}

func FuzzParseHandler_Call(f *testing.F) {
	for _, c := range callReference {
		f.Add(c.Example)
		f.Add(c.Usage + ";")
	}
	for _, src := range []string{"CALL provider.charge(:amount, key => );", "CALL email.send(:account_id,);", "CALL (;", "CALL provider.charge(:amount, key => :now, key => :now);"} {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		h, err := ParseHandler("fuzz", src)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || !strings.HasPrefix(ie.Msg, "handler fuzz") {
				t.Fatalf("error %v is not an InputError naming the handler", err)
			}
			return
		}
		for _, stmts := range h.sections {
			for _, st := range stmts {
				if c := st.Call; c != nil && (callUsage[c.Target] == "" || !contains(handlerParams, c.Arg) || c.Key != "" && !contains(handlerParams, c.Key)) {
					t.Fatalf("parsed a call the engine cannot run: %+v", c)
				}
			}
		}
		if _, err := Run(context.Background(), Request{Scenario: "card-charge", Custom: []*Handler{h},
			Script: "deliver pay-1 crash-after 2; redeliver pay-1; advance 30; publish pay-1; deliver pay-2"}); err != nil {
			t.Fatalf("a parsed handler does not run: %v", err)
		}
	})
}
