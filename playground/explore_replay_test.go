package playground

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"
)

// hiddenStyleHandlers are handlers a learner may write that neither the
// solutions nor the mutation suite look like: absolute writes, balance
// guards, ids kept in other tables, constant and account keys.
var hiddenStyleHandlers = []struct{ name, source string }{
	{"absolute-write", "@on credit\nUPDATE accounts SET balance = :balance WHERE id = :account_id;\n"},
	{"absolute-write-guarded", "@on credit\nUPDATE accounts SET balance = :balance WHERE id = :account_id AND balance < :balance;\n"},
	{"balance-guard-in-tx", "@on credit\nBEGIN;\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id AND balance + :amount <= :balance;\nCOMMIT;\n"},
	{"constant-key", "@on credit\nBEGIN;\nINSERT INTO processed_messages(message_id, processed_at) VALUES ('credited', :now) ON CONFLICT DO NOTHING;\n@stop-if-no-rows\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n"},
	{"account-key", "@on credit\nBEGIN;\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:account_id, :now) ON CONFLICT DO NOTHING;\n@stop-if-no-rows\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n"},
	{"ids-in-outbox", "@on credit\nBEGIN;\nINSERT INTO outbox(message_id, created_at) VALUES (:message_id, :now) ON CONFLICT DO NOTHING;\n@stop-if-no-rows\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n"},
	{"ids-in-inbox-never-pruned", "@on credit\nBEGIN;\nINSERT INTO inbox(message_id, received_at) VALUES (:message_id, :now) ON CONFLICT DO NOTHING;\n@stop-if-no-rows\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n"},
	{"select-then-insert-in-tx", "@on credit\nBEGIN;\nSELECT 1 FROM processed_messages WHERE message_id = :message_id;\n@stop-if-found\nINSERT INTO processed_messages(message_id, processed_at) VALUES (:message_id, :now);\nUPDATE accounts SET balance = balance + :amount WHERE id = :account_id;\nCOMMIT;\n"},
	{"ship-not-in", "@on ship\nBEGIN;\nUPDATE orders SET state = 'shipped', shipped_at = :now WHERE id = :order_id AND state NOT IN ('pending', 'shipped');\n@stop-if-no-rows\nINSERT INTO shipments(order_id, message_id, shipped_at) VALUES (:order_id, :message_id, :now);\nCOMMIT;\n"},
	{"ship-unguarded", "@on ship\nUPDATE orders SET state = 'shipped', shipped_at = :now WHERE id = :order_id;\nINSERT INTO shipments(order_id, message_id, shipped_at) VALUES (:order_id, :message_id, :now);\n"},
}

// explorerHandlers lists the handlers the replay property runs on an
// exercise: its start and solution, the mutation suite's and the hidden
// style ones (those that parse for it).
func explorerHandlers(t *testing.T, ex *Exercise) []struct{ name, source string } {
	out := []struct{ name, source string }{{"start", ex.Start}, {"solution", ex.Solution}}
	for _, g := range readMutationGroups(t) {
		if !contains(g.Exercises, ex.ID) {
			continue
		}
		for _, m := range g.Wrong {
			out = append(out, struct{ name, source string }{"wrong/" + m.Name, m.Source})
		}
		for _, m := range g.Right {
			out = append(out, struct{ name, source string }{"right/" + m.Name, m.Source})
		}
	}
	return append(out, hiddenStyleHandlers...)
}

// TestExplore_EveryStateEqualsAFreshReplay: for every exercise, every
// handler of the mutation suite and the hidden-style ones, every state
// the explorer reaches (from a snapshot, a reused ledger or a live run) is
// the state a fresh run of its schedule reaches: the same key (rows,
// broker, workers), the same verdict, and the ledger's mirror of its
// rows is what SQLite holds.
func TestExplore_EveryStateEqualsAFreshReplay(t *testing.T) {
	relaxCheckTimeout(t)
	every := 1
	if testing.Short() || raceDetector {
		// Every state is compared in the plain `go test ./...` that CI runs
		// first; the -race run, whose SQLite is up to 20 times slower, is
		// there to find data races, and a stride of the states exercises
		// the same code.
		every = 7
	}
	for _, ex := range exerciseFixtures(t) {
		for _, hs := range explorerHandlers(t, ex) {
			h, _, err := parseHandlerChecked(exerciseHandlerName, hs.source, checkSQL)
			if err != nil {
				continue // a handler for the other message kind
			}
			t.Run(ex.ID+"/"+hs.name, func(t *testing.T) {
				t.Parallel() // each on ledgers of its own: the cores share the work
				states, problems := 0, 0
				for _, c := range ex.checks() {
					for _, name := range ex.Scenarios {
						sc, _ := LookupScenario(name)
						x, err := newExplorer(context.Background(), sc, h, c.bounds, ex.Invariants, true)
						if err != nil {
							t.Fatal(err)
						}
						x.onState = func(path []Event, s *sim) {
							states++
							if states%every != 0 || problems > 3 {
								return
							}
							if d := x.differsFromReplay(path, s); d != "" {
								problems++
								t.Errorf("%s %s: %s: %s", c.field, sc.Name, (&Script{Events: path}).String(), d)
							}
						}
						if err := x.run(); err != nil {
							t.Fatalf("%s %s: %v", c.field, sc.Name, err)
						}
						if x.failure != nil {
							ce, err := x.counterexample()
							if err != nil {
								t.Fatalf("%s %s: %v", c.field, sc.Name, err)
							}
							_ = ce
						}
						if x.spare != nil {
							releaseLedger(x.spare, true)
						}
						if x.failure != nil {
							break
						}
					}
				}
			})
		}
	}
}

// differsFromReplay says how s, a state the search reached by path,
// differs from a fresh run of path on a new ledger; "" when it does not.
func (x *explorer) differsFromReplay(path []Event, s *sim) string {
	if d := mirrorDiffers(s.l); d != "" {
		return "explorer: " + d
	}
	r, err := exploreNewSim(x.ctx, x.sc, x.tmpl, x.h)
	if err != nil {
		return err.Error()
	}
	defer releaseLedger(r.l, true)
	for _, ev := range path {
		r.event++
		clear(r.changed)
		if err := r.apply(ev); err != nil {
			return "replay: " + err.Error()
		}
	}
	if d := mirrorDiffers(r.l); d != "" {
		return "replay: " + d
	}
	bud := x.budget()
	if x.key(s, bud) != x.key(r, bud) {
		return fmt.Sprintf("explorer's state %v differs from the replay's %v", s.actual(), r.actual())
	}
	settled := x.settled(s)
	i1, d1 := x.judge(path, s, settled)
	i2, d2 := x.judge(path, r, x.settled(r))
	if i1 != i2 || d1 != d2 {
		return fmt.Sprintf("explorer's verdict %s %q differs from the replay's %s %q", i1, d1, i2, d2)
	}
	return ""
}

// mirrorDiffers compares the ledger's Go mirror of its committed rows
// with what SQLite holds.
func mirrorDiffers(l *ledger) string {
	if l.pg != nil || !l.quiet() {
		return ""
	}
	st, err := readTables(l.pinned.conn)
	if err != nil {
		return err.Error()
	}
	for _, t := range tableOrder {
		if len(st[t]) == 0 && len(l.committed[t]) == 0 {
			continue
		}
		if a, b := fmt.Sprint(st[t]), fmt.Sprint(l.committed[t]); a != b {
			return fmt.Sprintf("%s: SQLite holds %s, the mirror %s", t, a, b)
		}
	}
	return ""
}

// TestCheck_AbsoluteWriteIsAnsweredNotAnError: the checker answers every
// hidden-style handler on every exercise with a verdict (a pass, a
// counterexample or a handler error), never with an error of its own such
// as "the counterexample did not reproduce" (which the API turned into a
// 500).
func TestCheck_AbsoluteWriteIsAnsweredNotAnError(t *testing.T) {
	relaxCheckTimeout(t)
	for _, ex := range exerciseFixtures(t) {
		for _, hs := range hiddenStyleHandlers {
			res, err := Check(context.Background(), ex, hs.source)
			if err != nil {
				t.Errorf("%s/%s: %v", ex.ID, hs.name, err)
				continue
			}
			if res.Counterexample != nil {
				t.Logf("%s/%s: %s", ex.ID, hs.name, res.Counterexample.Story)
			}
		}
	}
}

// TestExplore_AStateUnlikeItsReplayIsFoundAgainOnFreshLedgers: if the
// search's state ever differs from a fresh replay (here: its mirror of a
// balance is made wrong), its counterexample does not reproduce, and the
// check searches again with every run on a new ledger instead of failing.
func TestExplore_AStateUnlikeItsReplayIsFoundAgainOnFreshLedgers(t *testing.T) {
	ex := exerciseByID(t, "dedupe-credit")
	h, _, err := parseHandlerChecked(exerciseHandlerName, ex.Solution, checkSQL)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := LookupScenario(ex.Scenarios[0])
	x, err := newExplorer(context.Background(), sc, h, ex.Bounds.withDefaults(), ex.Invariants, true)
	if err != nil {
		t.Fatal(err)
	}
	x.onState = func(path []Event, s *sim) {
		if len(path) == 1 { // a wrong mirror: as if the credit had not committed
			rows := maps.Clone(s.l.committed["accounts"])
			for id, v := range rows {
				rows[id] = []any{v[0], int64(1)}
			}
			s.l.committed["accounts"] = rows
		}
	}
	if err := x.run(); err != nil {
		t.Fatal(err)
	}
	if x.failure == nil {
		t.Fatal("the wrong mirror broke no rule")
	}
	if _, err := x.counterexample(); !errors.Is(err, errNotReproduced) {
		t.Fatalf("counterexample: %v, want errNotReproduced", err)
	}
	x.releaseSpare()
	fresh, err := newExplorer(context.Background(), sc, h, ex.Bounds.withDefaults(), ex.Invariants, true)
	if err != nil {
		t.Fatal(err)
	}
	fresh.fresh = true
	if err := fresh.run(); err != nil || fresh.failure != nil {
		t.Fatalf("on fresh ledgers: %v, failure %+v", err, fresh.failure)
	}
}
