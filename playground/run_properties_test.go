package playground

import (
	"context"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestRun_RandomScripts generates scripts from the grammar and checks the
// invariants on every built-in handler: it runs, the change-hook mirror
// matches SQLite, no connection is left open, steps and frames line up.
func TestRun_RandomScripts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var mismatch string
	testHookBeforeClose = func(l *ledger) {
		rollbackOpenTransactions(l)
		got, err := readTables(l.pinned.conn)
		if err != nil {
			mismatch = err.Error()
			return
		}
		for _, table := range tableOrder {
			if (len(got[table]) > 0 || len(l.committed[table]) > 0) && !reflect.DeepEqual(got[table], l.committed[table]) {
				mismatch = table
			}
		}
	}
	defer func() { testHookBeforeClose = nil }()
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	n := 150
	if testing.Short() {
		n = 30
	}
	if v, err := strconv.Atoi(os.Getenv("IDEMLAB_RANDOM_SCRIPTS")); err == nil {
		n = v // a longer soak: IDEMLAB_RANDOM_SCRIPTS=5000 go test -run RandomScripts
	}
	for i := 0; i < n; i++ {
		sc := scenarioList[i%len(scenarioList)]
		var ids []string
		for _, m := range sc.Messages {
			ids = append(ids, m.ID)
		}
		var events []string
		for e := 0; e < 4+rng.IntN(10); e++ {
			m, w := pick(ids), pick(sc.Workers)
			faults := []string{"", "", " lose-ack", " crash-before-ack", " crash-after " + strconv.Itoa(1+rng.IntN(5))}
			switch rng.IntN(12) {
			case 0, 1:
				events = append(events, "deliver "+m+" to "+w+pick(faults))
			case 2:
				events = append(events, "redeliver "+m+pick(faults))
			case 3:
				events = append(events, "publish "+m+" to "+w+pick(faults))
			case 4, 5:
				events = append(events, "start "+m+" on "+w)
			case 6, 7:
				events = append(events, "step "+w+" "+strconv.Itoa(1+rng.IntN(3)))
			case 8:
				events = append(events, pick([]string{"finish ", "crash ", "restart "})+w)
			case 9:
				events = append(events, "expire "+m)
			case 10:
				events = append(events, pick([]string{"replay", "prune", "prune older-than 0", "advance 40"}))
			case 11:
				events = append(events, "finish "+w)
			}
		}
		script := strings.Join(events, "; ")
		for _, h := range allHandlerNames() {
			before := openLedgers.Load()
			tr, err := Run(context.Background(), Request{Scenario: sc.Name, Handlers: []string{h}, Script: script, Seed: int64(i)})
			if err != nil {
				t.Fatalf("%s × %s, %q: %v", sc.Name, h, script, err)
			}
			if mismatch != "" {
				t.Fatalf("%s × %s, %q: mirror differs from SQLite in %s", sc.Name, h, script, mismatch)
			}
			if openLedgers.Load() != before {
				t.Fatalf("%s × %s: a ledger was left open", sc.Name, h)
			}
			ht := tr.Handlers[0]
			steps := 0
			for _, f := range ht.Frames {
				steps += f.StepCount
			}
			diverged := ht.Verdict == VerdictDuplicate || ht.Verdict == VerdictLost || ht.Verdict == VerdictUnexpected
			if steps != len(ht.Steps) || ht.OK != (ht.Verdict == VerdictOK) || diverged != (len(ht.Violations) > 0) ||
				(ht.Verdict == VerdictPending) != (!diverged && len(ht.DeadLettered) == 0 && len(ht.InFlight) > 0) {
				t.Fatalf("%s × %s, %q: frames cover %d of %d steps; ok %v, violations %v", sc.Name, h, script, steps, len(ht.Steps), ht.OK, ht.Violations)
			}
		}
	}
}

// rollbackOpenTransactions ends what workers left open, so that the pinned
// connection reads only committed rows (it may be a worker's connection).
func rollbackOpenTransactions(l *ledger) {
	for _, c := range l.conns {
		if c.inTx {
			c.exec(context.Background(), "ROLLBACK", nil, false)
		}
	}
}

func TestLedger_LearnerConnectionsAreRestricted(t *testing.T) {
	sc, _ := LookupScenario("lost-ack")
	tmpl, err := sc.template()
	if err != nil {
		t.Fatal(err)
	}
	for _, restrict := range []bool{true, false} {
		l, err := openLedger(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"A", "B"} {
			open := l.conn
			if restrict {
				open = func(name string) (*dbConn, error) { return l.sandboxedConn(name, sandboxStatementTimeout) }
			}
			c, err := open(name)
			if err != nil {
				t.Fatal(err)
			}
			res := c.exec(context.Background(), "SELECT zeroblob(10)", nil, true)
			if (res.Err != nil) != restrict {
				t.Errorf("restrict %v, worker %s: error %v", restrict, name, res.Err)
			}
		}
		l.close()
	}
}

// TestRun_SeedChoosesAmongWorkers: with three workers, which one the
// scheduler runs while another waits for a lock depends on the seed, and
// only on the seed.
func TestRun_SeedChoosesAmongWorkers(t *testing.T) {
	script := "start msg-1 on A; step A 2; start msg-1 on B; start msg-1 on C; step C; finish B"
	seen := map[string]bool{}
	for seed := int64(1); seed <= 12; seed++ {
		tr, err := Run(context.Background(), Request{Scenario: "concurrent-duplicate", Handlers: []string{"dedupe-tx"}, Script: script, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if !tr.Handlers[0].OK {
			t.Errorf("seed %d: verdict %s", seed, tr.Handlers[0].Verdict)
		}
		var order []string
		for _, st := range tr.Handlers[0].Steps {
			order = append(order, st.Worker+":"+st.Kind)
		}
		seen[strings.Join(order, " ")] = true
	}
	if len(seen) < 2 {
		t.Errorf("12 seeds gave %d schedule(s); want the seed to choose", len(seen))
	}
}

// TestRun_PerMessageVerdicts pins the verdicts that come from per-message
// accounting, not from the final figures: a loss and duplicates that
// cancel out, messages in flight, a committed duplicate while another
// message is in flight, dead letters, and orders that were never paid.
func TestRun_PerMessageVerdicts(t *testing.T) {
	alwaysFails, err := ParseHandler("always-fails", "@on credit\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, NULL);\n")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, scenario, handler, script string
		custom                          *Handler
		verdict                         string
		violations                      []string // kind:message, in order
		inFlight, deadLettered          []string
	}{
		{"LossAndDuplicatesCancelOut", "topic-replay", "mark-before",
			"deliver msg-1 lose-ack; deliver msg-2 lose-ack; advance 1; prune older-than 0; redeliver msg-1; redeliver msg-2; deliver msg-3 crash-after 2; redeliver msg-3",
			nil, VerdictDuplicate, []string{"duplicate-effect:msg-1", "duplicate-effect:msg-2", "lost-effect:msg-3"}, nil, nil},
		{"CrashedBeforeTheEffectIsPending", "crash-mid-handler", "dedupe-tx", "deliver msg-1 crash-after 2",
			nil, VerdictPending, nil, []string{"msg-1"}, nil},
		{"MarkedButNotAppliedIsPendingUntilRedelivered", "crash-mid-handler", "mark-before", "deliver msg-1 crash-after 2",
			nil, VerdictPending, nil, []string{"msg-1"}, nil},
		{"MarkedButNotAppliedIsLostOnceAcked", "crash-mid-handler", "mark-before", "deliver msg-1 crash-after 2; redeliver msg-1",
			nil, VerdictLost, []string{"lost-effect:msg-1"}, nil, nil},
		{"CommittedDuplicateDivergesWhileInFlight", "lost-ack", "increment", "deliver msg-1 lose-ack; redeliver msg-1 lose-ack; start msg-2 on B",
			nil, VerdictDuplicate, []string{"duplicate-effect:msg-1"}, []string{"msg-1", "msg-2"}, nil},
		{"AppliedButNotAckedIsPending", "crash-before-ack", "increment", "deliver msg-1 crash-before-ack",
			nil, VerdictPending, nil, []string{"msg-1"}, nil},
		{"DeadLetteredIsItsOwnOutcome", "lost-ack", "", "deliver msg-1; redeliver msg-1; redeliver msg-1; redeliver msg-1; redeliver msg-1; redeliver msg-1",
			alwaysFails, VerdictDeadLettered, nil, nil, []string{"msg-1"}},
		// Republished copies are broker records of their own (issue 10
		// item 5): acking the second copy leaves the first one owed.
		{"AckingACopyLeavesAnEarlierCopyOwed", "webhook-retry", "dedupe-tx", "deliver evt-1 lose-ack; publish evt-1",
			nil, VerdictPending, nil, []string{"evt-1"}, nil},
		{"TheEarlierCopyRedeliveredSettles", "webhook-retry", "dedupe-tx", "deliver evt-1 lose-ack; publish evt-1; redeliver evt-1",
			nil, VerdictOK, nil, nil, nil},
		{"ACopyRunningWhileAnotherIsAcked", "webhook-retry", "dedupe-tx", "start evt-1 on A; publish evt-1 to B",
			nil, VerdictPending, nil, []string{"evt-1"}, nil},
		{"ACopyRunningWhileAnotherIsAckedFinishes", "webhook-retry", "dedupe-tx", "start evt-1 on A; publish evt-1 to B; finish A",
			nil, VerdictOK, nil, nil, nil},
		{"EachCopyAppliedIsADuplicateOfOneMessage", "webhook-retry", "increment", "deliver evt-1 lose-ack; publish evt-1; redeliver evt-1",
			nil, VerdictDuplicate, []string{"duplicate-effect:evt-1"}, nil, nil},
		{"ADeadLetteredCopyDoesNotHideAnotherCopy", "lost-ack", "", "deliver msg-1; redeliver msg-1; redeliver msg-1; redeliver msg-1; redeliver msg-1; redeliver msg-1; publish msg-1",
			alwaysFails, VerdictDeadLettered, nil, []string{"msg-1"}, []string{"msg-1"}},
		// A producer that publishes one payment twice under two message
		// ids (issue 14): one business event, its effect expected once.
		{"APaymentPublishedTwiceIsAppliedTwiceByMessageID", "producer-retry", "dedupe-tx", "deliver msg-2; deliver msg-1",
			nil, VerdictDuplicate, []string{"duplicate-effect:msg-1"}, nil, nil},
		{"APaymentPublishedTwiceOnceByItsBusinessKey", "producer-retry", "dedupe-key", "deliver msg-2; deliver msg-1 lose-ack; redeliver msg-1; deliver msg-3",
			nil, VerdictOK, nil, nil, nil},
		{"OneCopyOfAPaymentAloneIsOK", "producer-retry", "dedupe-tx", "deliver msg-2; deliver msg-3",
			nil, VerdictOK, nil, nil, nil},
		{"AStaleRepeatOfAnAbsoluteValueOverwritesANewerPayment", "producer-retry", "set-value", "deliver msg-1; deliver msg-3; deliver msg-2",
			nil, VerdictLost, []string{"lost-effect:msg-3"}, nil, nil},
		// A dead-letter queue redriven a week later (issue 14): the copy
		// comes back after the dedupe row was pruned.
		{"AppliedButDeadLetteredUntilRedriven", "dlq-redrive", "dedupe-tx", "deliver pay-1 lose-ack; redeliver pay-1 lose-ack; redeliver pay-1 lose-ack; redeliver pay-1",
			nil, VerdictDeadLettered, nil, nil, []string{"pay-1"}},
		{"ARedriveAfterThePruneAppliesItAgain", "dlq-redrive", "dedupe-tx", "",
			nil, VerdictDuplicate, []string{"duplicate-effect:pay-1"}, nil, nil},
		{"ARedriveWithinTheRetentionIsHarmless", "dlq-redrive", "dedupe-tx", "deliver pay-1 lose-ack; redeliver pay-1 lose-ack; redeliver pay-1 lose-ack; redeliver pay-1; advance 168; prune older-than 200; redrive pay-1",
			nil, VerdictOK, nil, nil, nil},
		{"ARedriveOfAMessageNotDeadLetteredIsRefused", "dlq-redrive", "dedupe-tx", "deliver pay-1; redrive pay-1",
			nil, VerdictOK, nil, nil, nil},
		{"UnpaidOrdersShipNothingAndAck", "never-paid", "conditional", "",
			nil, VerdictOK, nil, nil, nil},
		{"ShippingAnUnpaidOrderIsUnexpected", "never-paid", "increment", "deliver ship-2",
			nil, VerdictUnexpected, []string{"unexpected-effect:ship-2"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := Request{Scenario: tt.scenario, Script: tt.script}
			if tt.custom != nil {
				req.Custom = []*Handler{tt.custom}
			} else {
				req.Handlers = []string{tt.handler}
			}
			tr, err := Run(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			ht := tr.Handlers[0]
			var vs, inFlight, dead []string
			for _, v := range ht.Violations {
				vs = append(vs, v.Kind+":"+v.MessageID)
			}
			for _, m := range ht.InFlight {
				inFlight = append(inFlight, m.MessageID)
			}
			for _, m := range ht.DeadLettered {
				dead = append(dead, m.MessageID)
			}
			if ht.Verdict != tt.verdict || !reflect.DeepEqual(vs, tt.violations) || !reflect.DeepEqual(inFlight, tt.inFlight) || !reflect.DeepEqual(dead, tt.deadLettered) {
				t.Errorf("verdict %s, violations %v, in flight %v, dead-lettered %v; want %s, %v, %v, %v (expected %v, actual %v)",
					ht.Verdict, vs, inFlight, dead, tt.verdict, tt.violations, tt.inFlight, tt.deadLettered, ht.Expected, ht.Actual)
			}
			if ht.OK != (tt.verdict == VerdictOK) {
				t.Errorf("ok = %v with verdict %s", ht.OK, ht.Verdict)
			}
		})
	}
}
