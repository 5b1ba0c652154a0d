package playground

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// TestBrokerAt_MatchesTheRun: the broker's state a trace reports after each
// event is the state the engine itself was in: which worker holds which
// message, and which messages the broker deleted (acked).
func TestBrokerAt_MatchesTheRun(t *testing.T) {
	scripts := map[string]string{
		"concurrent-duplicate": "start msg-1 on A; step A 2; start msg-1 on B; step B; crash A; finish B; redeliver msg-1",
		"lease-expiry":         "start msg-1 on A; step A; expire msg-1; deliver msg-1 to B; finish A",
		"topic-replay":         "deliver msg-1; deliver msg-2 lose-ack; replay; publish msg-1",
	}
	for _, sc := range Scenarios() {
		text := sc.DefaultScript
		if s, ok := scripts[sc.Name]; ok {
			text = s
		}
		script, err := ParseScript(text)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range sc.Handlers {
			tr, err := Run(context.Background(), Request{Scenario: sc.Name, Handlers: []string{name}, Script: text})
			if err != nil {
				t.Fatalf("%s: %v", sc.Name, err)
			}
			ht := tr.Handlers[0]
			tmpl, _ := sc.template()
			l, err := openLedger(tmpl)
			if err != nil {
				t.Fatal(err)
			}
			s := newSim(context.Background(), sc, builtinHandlers[name], l)
			for i, ev := range script.Events {
				s.event = i + 1
				if err := s.apply(ev); err != nil {
					t.Fatal(err)
				}
				got := ht.BrokerAfter(i + 1)
				for j, w := range s.workers {
					want := ""
					if w.job != nil {
						want = w.job.msg.m.ID
					}
					if got.Workers[j].Holding != want {
						t.Errorf("%s/%s event %d: %s holds %q, the engine says %q", sc.Name, name, i+1, w.name, got.Workers[j].Holding, want)
					}
				}
				for j, m := range sc.Messages {
					if got.Messages[j].Acked != s.msgs[m.ID].deleted() {
						t.Errorf("%s/%s event %d: %s acked %v, the engine says %v", sc.Name, name, i+1, m.ID, got.Messages[j].Acked, s.msgs[m.ID].deleted())
					}
				}
			}
			l.close()
		}
	}
}

// TestVerdictAt_FollowsTheFrames: the verdict after the last event is the
// run's, and nothing has gone wrong before the first event.
func TestVerdictAt_FollowsTheFrames(t *testing.T) {
	for _, sc := range Scenarios() {
		tr, err := Run(context.Background(), Request{Scenario: sc.Name})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range tr.Handlers {
			if v := h.VerdictAt(0); v != VerdictOK {
				t.Errorf("%s/%s: verdict %s before any event", sc.Name, h.Name, v)
			}
			last := len(h.Frames)
			want := h.Verdict
			if got := h.VerdictAt(last); got != want {
				t.Errorf("%s/%s: verdict at the end %s, the run says %s", sc.Name, h.Name, got, want)
			}
			effects := h.EffectSteps(last)
			for _, v := range h.Violations {
				if v.Kind != VerdictDuplicate || v.MessageID == "" || v.Effect != "" {
					continue
				}
				// A payment's effect counts whichever of its messages applied it.
				var steps []int
				for _, m := range sc.Messages {
					if m.Kind == sc.Message(v.MessageID).Kind && m.BusinessKey() == sc.Message(v.MessageID).BusinessKey() {
						steps = append(steps, effects[m.ID]...)
					}
				}
				if len(steps) < 2 {
					t.Errorf("%s/%s: %s is a duplicate, but its effect steps are %v", sc.Name, h.Name, v.MessageID, steps)
				}
			}
		}
	}
}

func TestScenario_InitialLedgerAndTables(t *testing.T) {
	for _, sc := range Scenarios() {
		tables := map[string]bool{}
		for _, tb := range sc.Tables() {
			tables[tb] = true
		}
		if !tables["processed_messages"] || tables["accounts"] != (len(sc.Accounts) > 0) || tables["orders"] != (len(sc.Orders) > 0) {
			t.Errorf("%s: tables %v", sc.Name, sc.Tables())
		}
		led := sc.InitialLedger()
		wantTables := len(tableOrder) - len(storyTables) // a story table shows only with rows
		if len(sc.Prices) > 0 {
			wantTables++
		}
		if sc.Partition != nil {
			wantTables++ // consumer_offsets
		}
		wantTables += len(sc.outsideTableNames()) // the provider's and the email sender's records
		if len(led) != wantTables {
			t.Fatalf("%s: %d tables in the initial ledger", sc.Name, len(led))
		}
		if len(led[0].Rows) != len(sc.Accounts) || len(led[1].Rows) != len(sc.Orders) {
			t.Errorf("%s: initial ledger %+v", sc.Name, led)
		}
		if len(sc.InitialFigures()) != len(sc.Accounts)*(1+len(sc.Outside))+len(sc.Orders)+len(sc.Prices) {
			t.Errorf("%s: initial figures %v", sc.Name, sc.InitialFigures())
		}
	}
}

// TestBrokerAt_CopiesAreAckedOnTheirOwn: after the producer publishes a
// message again, acking the new copy leaves the message with the broker
// while the first copy is owed, and the steps name the copy.
func TestBrokerAt_CopiesAreAckedOnTheirOwn(t *testing.T) {
	tr, err := Run(context.Background(), Request{Scenario: "webhook-retry", Handlers: []string{"dedupe-tx"},
		Script: "deliver evt-1 lose-ack; publish evt-1; redeliver evt-1"})
	if err != nil {
		t.Fatal(err)
	}
	ht := tr.Handlers[0]
	for event, acked := range map[int]bool{1: false, 2: false, 3: true} {
		if got := ht.BrokerAfter(event).Messages[0].Acked; got != acked {
			t.Errorf("after event %d: acked %v, want %v", event, got, acked)
		}
	}
	copies := map[int][]int{} // event → copy of each deliver step
	for _, st := range ht.Steps {
		if st.Kind == StepDeliver {
			copies[st.Event] = append(copies[st.Event], st.Copy)
		}
	}
	if want := map[int][]int{1: {0}, 2: {2}, 3: {0}}; !reflect.DeepEqual(copies, want) {
		t.Errorf("deliveries by event and copy %v, want %v (the redelivery is of the first copy, whose ack was lost)", copies, want)
	}
	if d := ht.Frames[1].Unsettled; len(d) != 1 || !strings.Contains(d[0].Detail, "copy 1 of evt-1's ack was lost") {
		t.Errorf("after the publish, unsettled %+v; want copy 1's lost ack named", d)
	}
}
