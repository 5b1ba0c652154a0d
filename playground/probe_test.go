package playground

import (
	"context"
	"testing"
)

// candidateEvents is every event a learner's controls can add in a scenario.
func candidateEvents(sc *Scenario) []Event {
	var out []Event
	for _, m := range sc.Messages {
		for _, kind := range []string{EventDeliver, EventRedeliver, EventPublish, EventExpire} {
			out = append(out, Event{Kind: kind, Message: m.ID})
		}
		for _, w := range sc.Workers {
			out = append(out, Event{Kind: EventDeliver, Message: m.ID, Worker: w}, Event{Kind: EventStart, Message: m.ID, Worker: w})
		}
	}
	for _, w := range sc.Workers {
		out = append(out, Event{Kind: EventStep, Worker: w}, Event{Kind: EventFinish, Worker: w}, Event{Kind: EventCrash, Worker: w})
	}
	return append(out, Event{Kind: EventReplay}, Event{Kind: EventPrune})
}

// A probe's answer is what running the event would do: refused exactly
// when appending the event to the script records only skip steps in every
// handler's run. The run itself is the reference.
func TestRun_ProbeAgreesWithRunningTheEvent(t *testing.T) {
	ctx := context.Background()
	scripts := map[string]string{
		"lost-ack":             "deliver msg-1 lose-ack; deliver msg-2; redeliver msg-1",
		"concurrent-duplicate": "",
		"lease-expiry":         "",
		"crash-mid-handler":    "",
	}
	for name, text := range scripts {
		sc, err := LookupScenario(name)
		if err != nil {
			t.Fatal(err)
		}
		if text == "" {
			text = sc.DefaultScript
		}
		script, err := ParseScript(text)
		if err != nil {
			t.Fatal(err)
		}
		cands := candidateEvents(sc)
		for at := 0; at <= len(script.Events); at++ {
			tr, err := Run(ctx, Request{Scenario: name, Script: text, Probe: &Probe{At: at, Events: cands}})
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Refusals) != len(cands) {
				t.Fatalf("%d answers for %d events", len(tr.Refusals), len(cands))
			}
			for i, ev := range cands {
				next := &Script{Events: append(append([]Event(nil), script.Events[:at]...), ev)}
				run, err := Run(ctx, Request{Scenario: name, Script: next.String()})
				if err != nil {
					t.Fatal(err)
				}
				onlySkips, skipNote := true, ""
				for _, h := range run.Handlers {
					for _, st := range h.Steps {
						if st.Event != at+1 {
							continue
						}
						if st.Kind != StepSkip {
							onlySkips = false
						} else if skipNote == "" {
							skipNote = st.Note
						}
					}
				}
				if refused := tr.Refusals[i] != ""; refused != onlySkips {
					t.Errorf("%s after %d events, %q: probe says refused=%v (%q), running it says only skips=%v", name, at, ev.String(), refused, tr.Refusals[i], onlySkips)
				} else if refused && tr.Refusals[i] != skipNote {
					t.Errorf("%s after %d events, %q: probe says %q, the run's skip says %q", name, at, ev.String(), tr.Refusals[i], skipNote)
				}
			}
		}
	}
}

func TestRun_ProbeRejectsBadQuestions(t *testing.T) {
	for _, p := range []*Probe{{At: -1}, {At: 9}, {At: 0, Events: []Event{{Kind: EventDeliver, Message: "msg-9"}}}} {
		_, err := Run(context.Background(), Request{Scenario: "lost-ack", Script: "deliver msg-1", Probe: p})
		if ie, ok := err.(*InputError); !ok || ie.Field != "probe" {
			t.Errorf("probe %+v: error %v, want a probe InputError", p, err)
		}
	}
}
