package playground

import (
	"fmt"
	"sort"
)

// committed is told about every commit: it marks changed rows for the
// frame and counts, per message, the commits that changed a business figure.
func (s *sim) committed(changes []rowChange) {
	effective := map[string]bool{}
	for _, ch := range changes {
		if ch.After != nil {
			s.changed[ch.Table+"/"+rowKey(ch.Table, ch.NewRowID, ch.After)] = true
		} else {
			s.changed[ch.Table+"/"+rowKey(ch.Table, ch.OldRowID, ch.Before)] = true
		}
		if ch.Message != "" && isBusinessChange(ch) {
			effective[ch.Message] = true
		}
	}
	for id := range effective {
		// The commit belongs to the step being recorded next.
		s.effects[id] = append(s.effects[id], len(s.steps)+1)
		s.effectPending = true
	}
}

func isBusinessChange(ch rowChange) bool {
	switch ch.Table {
	case "accounts", "orders":
		if ch.Op != "update" {
			return true
		}
		return fmt.Sprint(ch.Before[1]) != fmt.Sprint(ch.After[1])
	case "shipments":
		return true
	}
	return false
}

// expected applies each message delivered so far exactly once, in publish
// order, to the initial ledger: the scenario's reference semantics.
func (s *sim) expected() []Figure {
	balances := map[string]int64{}
	states := map[string]string{}
	shipped := map[string]int64{}
	for _, a := range s.sc.Accounts {
		balances[a.ID] = a.Balance
	}
	for _, o := range s.sc.Orders {
		states[o.ID] = o.State
	}
	for _, m := range s.sc.Messages {
		if !s.delivered[m.ID] {
			continue
		}
		switch m.Kind {
		case KindCredit:
			balances[m.AccountID] += m.Amount
		case KindShip:
			states[m.OrderID] = "shipped"
			shipped[m.OrderID] = 1
		}
	}
	out := make([]Figure, 0, len(s.sc.Accounts)+len(s.sc.Orders))
	for _, a := range s.sc.Accounts {
		out = append(out, Figure{Table: "accounts", Key: a.ID, Value: balances[a.ID]})
	}
	for _, o := range s.sc.Orders {
		out = append(out, Figure{Table: "orders", Key: o.ID, Value: shipped[o.ID], State: states[o.ID]})
	}
	return out
}

// actual reads the same figures from the committed ledger.
func (s *sim) actual() []Figure {
	byID := func(table, id string) []any {
		for _, v := range s.l.rows(table) {
			if fmt.Sprint(v[0]) == id {
				return v
			}
		}
		return nil
	}
	out := make([]Figure, 0, len(s.sc.Accounts)+len(s.sc.Orders))
	for _, a := range s.sc.Accounts {
		f := Figure{Table: "accounts", Key: a.ID}
		if v := byID("accounts", a.ID); v != nil {
			f.Value, _ = v[1].(int64)
		}
		out = append(out, f)
	}
	for _, o := range s.sc.Orders {
		f := Figure{Table: "orders", Key: o.ID, State: "(deleted)"}
		if v := byID("orders", o.ID); v != nil {
			f.State = fmt.Sprint(v[1])
		}
		for _, sh := range s.l.rows("shipments") {
			if fmt.Sprint(sh[0]) == o.ID {
				f.Value++
			}
		}
		out = append(out, f)
	}
	return out
}

// verdict compares the final ledger with the expected one and, when they
// differ, explains the difference per message.
func (s *sim) verdict(ht *HandlerTrace, script *Script) {
	ht.Violations = []Violation{}
	ht.OK = figuresEqual(ht.Expected, ht.Actual)
	ht.Verdict = VerdictOK
	if ht.OK {
		return
	}
	for _, m := range s.sc.Messages {
		if !s.delivered[m.ID] {
			continue
		}
		switch eff := s.effects[m.ID]; {
		case len(eff) > 1:
			ht.Violations = append(ht.Violations, Violation{Kind: VerdictDuplicate, MessageID: m.ID, Step: eff[1],
				Detail: fmt.Sprintf("%s applied %d times", m.ID, len(eff))})
		case len(eff) == 0:
			ht.Violations = append(ht.Violations, Violation{Kind: VerdictLost, MessageID: m.ID, Step: s.skippedAt(m.ID),
				Detail: m.ID + " never applied"})
		}
	}
	// A figure below what is expected with no lost message means an effect
	// was overwritten (a stale absolute value written after a newer one):
	// blame the newest delivered message on that figure.
	for i := range ht.Expected {
		e, a := ht.Expected[i], ht.Actual[i]
		if e == a || (a.Value > e.Value && a.State == e.State) {
			continue
		}
		newest := ""
		for _, m := range s.sc.Messages {
			if s.delivered[m.ID] && figureOf(m) == e.Table+"/"+e.Key {
				newest = m.ID
			}
		}
		if newest == "" || hasViolation(ht.Violations, VerdictLost, newest) {
			continue
		}
		ht.Violations = append(ht.Violations, Violation{Kind: VerdictLost, MessageID: newest, Step: s.lastWriteStep(e),
			Detail: fmt.Sprintf("%s's effect was overwritten: %s, expected %s", newest, a, e)})
	}
	// The verdict follows the first figure that differs (figuresVerdict).
	ht.Verdict = figuresVerdict(ht.Expected, ht.Actual)
	if len(ht.Violations) == 0 {
		ht.Violations = append(ht.Violations, Violation{Kind: ht.Verdict, Step: len(s.steps), Detail: "the ledger differs from the expected one"})
	}
	sort.SliceStable(ht.Violations, func(i, j int) bool {
		a, b := ht.Violations[i], ht.Violations[j]
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		return a.Kind == ht.Verdict && b.Kind != ht.Verdict
	})
	for i := range ht.Violations {
		if st := ht.Violations[i].Step; st > 0 {
			ht.Violations[i].Event = s.steps[st-1].Event
		}
	}
	v := ht.Violations[0]
	d := &Divergence{Step: v.Step, Event: v.Event, MessageID: v.MessageID, Kind: v.Kind, Detail: v.Detail}
	if v.Event > 0 {
		d.EventText = script.Events[v.Event-1].String()
	}
	ht.FirstDivergence = d
}

func (s *sim) lastStepOf(id string) int {
	for i := len(s.steps) - 1; i >= 0; i-- {
		if s.steps[i].Message == id {
			return i + 1
		}
	}
	return len(s.steps)
}

// skippedAt is where a handler decided a message needed no work (a guard or
// the filter), else the message's last step.
func (s *sim) skippedAt(id string) int {
	for i := len(s.steps) - 1; i >= 0; i-- {
		if st := s.steps[i]; st.Message == id && (st.Kind == StepStop || st.Kind == StepFilterHit) {
			return i + 1
		}
	}
	return s.lastStepOf(id)
}

// lastWriteStep is the last step whose changes touched the figure's row.
func (s *sim) lastWriteStep(f Figure) int {
	for i := len(s.steps) - 1; i >= 0; i-- {
		for _, c := range s.steps[i].Changes {
			if c.Table == f.Table && c.Key == f.Key || f.Table == "orders" && c.Table == "shipments" && c.After["order_id"] == f.Key {
				return i + 1
			}
		}
	}
	return len(s.steps)
}

func figureOf(m Message) string {
	if m.Kind == KindShip {
		return "orders/" + m.OrderID
	}
	return "accounts/" + m.AccountID
}

func hasViolation(vs []Violation, kind, id string) bool {
	for _, v := range vs {
		if v.Kind == kind && v.MessageID == id {
			return true
		}
	}
	return false
}

func figuresEqual(a, b []Figure) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
