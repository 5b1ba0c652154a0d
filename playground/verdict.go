package playground

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// committed is told about every commit: it marks changed rows for the
// frame and keeps the per-message account of effects. A commit that
// changed a business figure applied its message's effect (again) only if
// it put the effect in the ledger more times than it has ever been: an
// absolute balance written again, stale or not, or one that puts back a
// credit a stale write took out, changes the figure without applying
// anything twice.
func (s *sim) committed(changes []rowChange) {
	msg := ""
	for _, ch := range changes {
		if ch.Message != "" {
			msg = ch.Message
			break
		}
	}
	before := s.fx.applications(s.sc, msg)
	defer func() {
		after := s.fx.applications(s.sc, msg)
		if s.effectPending && (after < 0 || before < 0 || s.fx.newPeak(msg, after)) {
			s.effectApplied = true
		}
	}()
	for _, ch := range changes {
		if ch.After != nil {
			s.changed[ch.Table+"/"+rowKey(ch.Table, ch.NewRowID, ch.After)] = true
		} else {
			s.changed[ch.Table+"/"+rowKey(ch.Table, ch.OldRowID, ch.Before)] = true
		}
		// The commit belongs to the step being recorded next.
		s.fx.record(s.sc, ch, len(s.steps)+1)
		if ch.Message != "" && isBusinessChange(ch) {
			s.effectPending = true
		}
	}
}

func isBusinessChange(ch rowChange) bool {
	switch ch.Table {
	case "accounts", "orders":
		if ch.Op != "update" {
			return true
		}
		return valueText(ch.Before[1]) != valueText(ch.After[1])
	case "shipments":
		return true
	case "prices":
		return ch.Op != "update" || valueText(ch.Before[1]) != valueText(ch.After[1])
	}
	return false
}

// expected applies each message delivered so far exactly once, in publish
// order, to the initial ledger: the scenario's reference semantics.
//
// A balance an absolute write set ahead of the delivered messages (the
// producer's balance after a message whose predecessors are still on
// their way) is expected as written: those credits are carried.
func (s *sim) expected() []Figure {
	figs, applies := s.referenceAll()
	if ahead := s.carriedAhead(); ahead != nil {
		figs = slices.Clone(figs)
		for i := range figs {
			if figs[i].Table == "accounts" {
				figs[i].Value += ahead[figs[i].Key]
			}
		}
	}
	return append(figs, s.outsideFigures(applies)...)
}

// referenceAll is reference(nil), computed once for each set of delivered
// messages (which only grows during a run): every frame's judgement and
// expected figures ask for it. Callers only read what it returns (the
// figures are clipped: an append copies them).
func (s *sim) referenceAll() ([]Figure, map[string]bool) {
	if s.refApplies == nil || s.refFor != len(s.delivered) {
		figs, applies := s.reference(nil)
		s.refFigs, s.refApplies, s.refFor = slices.Clip(figs), applies, len(s.delivered)
	}
	return s.refFigs, s.refApplies
}

// reference applies each delivered message exactly once, in publish order,
// to the initial ledger, skipping those in skip, under the business rules:
// a credit adds its amount; a ship message ships an order in state 'paid'
// (state 'shipped', one shipment) and changes nothing for an order never
// paid, cancelled or already shipped. It returns the figures and, per
// message, whether it must take effect.
func (s *sim) reference(skip map[string]bool) ([]Figure, map[string]bool) {
	// The figures themselves are the running totals: a scenario has a few
	// accounts and orders, so a scan finds one faster than a map is built.
	out := make([]Figure, 0, len(s.sc.Accounts)+len(s.sc.Orders))
	for _, a := range s.sc.Accounts {
		out = append(out, Figure{Table: "accounts", Key: a.ID, Value: a.Balance})
	}
	for _, o := range s.sc.Orders {
		out = append(out, Figure{Table: "orders", Key: o.ID, State: o.State})
	}
	accounts, orders := out[:len(s.sc.Accounts)], out[len(s.sc.Accounts):]
	applies := map[string]bool{}
	var paidBuf [16]string
	paid := paidBuf[:0] // business keys of the credits applied so far
	for _, m := range s.sc.Messages {
		if !s.delivered[m.ID] || skip[m.ID] {
			continue
		}
		switch m.Kind {
		case KindCredit:
			if slices.Contains(paid, m.BusinessKey()) {
				break // a payment published again under a new id: no effect
			}
			paid = append(paid, m.BusinessKey())
			for i := range accounts {
				if accounts[i].Key == m.AccountID {
					accounts[i].Value += m.Amount
				}
			}
			applies[m.ID] = true
		case KindShip:
			for i := range orders {
				if orders[i].Key == m.OrderID && orders[i].State == "paid" {
					orders[i].State, orders[i].Value = "shipped", 1
					applies[m.ID] = true
				}
			}
		}
	}
	return append(out, s.newestPrices(skip, applies)...), applies
}

// actual reads the same figures from the committed ledger.
func (s *sim) actual() []Figure {
	byID := func(table, id string) []any {
		for _, v := range s.l.rows(table) {
			if valueText(v[0]) == id {
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
			f.State = valueText(v[1])
		}
		for _, sh := range s.l.rows("shipments") {
			if valueText(sh[0]) == o.ID {
				f.Value++
			}
		}
		out = append(out, f)
	}
	out = append(out, s.actualPrices()...)
	return append(out, s.outsideFigures(nil)...)
}

// verdict is per-message accounting. Every delivered message whose business
// rule says it takes effect must have taken effect exactly once, every one
// whose rule says "no effect" none; a message the broker still owes is in
// flight and not judged yet (unless it already took effect twice); a
// dead-lettered message is its own outcome. The figures must then agree
// with the expected ledger of the settled messages.
func (s *sim) judge(actual []Figure) judgement {
	ht := judgement{Violations: []Violation{}, InFlight: []MessageOutcome{}, DeadLettered: []MessageOutcome{}}
	_, applies := s.referenceAll()
	accounts := s.account(applies)
	var unsettled map[string]bool // in flight or dead-lettered, and not applied
	for i, m := range s.sc.Messages {
		acc := accounts[i]
		if !acc.delivered {
			continue
		}
		// A message id is settled when every copy the producer published
		// is: its effect is expected once whatever the number of copies.
		st := s.msgs[m.ID]
		if ht.Effects == nil {
			ht.Effects = make(map[string]int, len(s.delivered))
		}
		ht.Effects[m.ID] = acc.times
		if acc.unexpectedAt > 0 && acc.times == 0 {
			ht.Effects[m.ID] = 1 // it shipped an order it must not have
		}
		dead := st.firstDead()
		inFlight := s.owes(st)
		if dead != nil {
			ht.DeadLettered = append(ht.DeadLettered, MessageOutcome{MessageID: m.ID,
				Detail: fmt.Sprintf("%s was dead-lettered after %d failed deliveries", m.ID, dead.deliveries)})
		}
		if inFlight {
			ht.InFlight = append(ht.InFlight, MessageOutcome{MessageID: m.ID, Detail: s.inFlightWhy(m.ID)})
		}
		switch {
		case acc.unexpectedAt > 0:
			ht.Violations = append(ht.Violations, Violation{Kind: VerdictUnexpected, MessageID: m.ID, Step: acc.unexpectedAt,
				Detail: fmt.Sprintf("%s shipped order %s, which was not paid: it must change nothing", m.ID, m.OrderID)})
		case acc.times < 0:
			// The figure is unexplained: the figure comparison below judges it.
		case acc.times > 1 && len(acc.carriers) > 1:
			ht.Violations = append(ht.Violations, Violation{Kind: VerdictDuplicate, MessageID: m.ID, Step: acc.twiceAt,
				Detail: fmt.Sprintf("payment %s applied %d times: %s carry it, and it must take effect once", m.BusinessKey(), acc.times, strings.Join(acc.carriers, " and "))})
		case acc.times > 1:
			ht.Violations = append(ht.Violations, Violation{Kind: VerdictDuplicate, MessageID: m.ID, Step: acc.twiceAt,
				Detail: fmt.Sprintf("%s applied %d times", m.ID, acc.times)})
		case acc.applies && acc.times == 0 && (inFlight || dead != nil):
			if unsettled == nil {
				unsettled = map[string]bool{}
			}
			unsettled[m.ID] = true
		case acc.applies && acc.times == 0 && acc.staleBy != "":
			ht.Violations = append(ht.Violations, Violation{Kind: VerdictLost, MessageID: m.ID, Step: acc.staleAt, Detail: s.staleDetail(&m, acc)})
		case acc.applies && acc.times == 0 && acc.droppedAt > 0:
			ht.Violations = append(ht.Violations, Violation{Kind: VerdictLost, MessageID: m.ID, Step: acc.droppedAt,
				Detail: s.droppedDetail(&m, acc)})
		case acc.applies && acc.times == 0:
			ht.Violations = append(ht.Violations, Violation{Kind: VerdictLost, MessageID: m.ID, Step: s.skippedAt(m.ID),
				Detail: s.lostDetail(m.ID)})
		}
	}
	// The figures, against the ledger of the messages that settled: a
	// figure below that with no lost message means an effect was
	// overwritten (a stale absolute value written after a newer one).
	settled, _ := s.referenceAll() // no message unsettled: reference(nil)
	if len(unsettled) > 0 {
		settled, _ = s.reference(unsettled)
	}
	ahead := s.carriedAhead()
	for i := range settled {
		e, a := settled[i], actual[i]
		if e == a || e.Table == "accounts" && a.Value-e.Value == ahead[e.Key] && a.State == e.State {
			continue // equal, or ahead by the credits an absolute balance carried
		}
		newest := ""
		for _, m := range s.sc.Messages {
			if s.delivered[m.ID] && !unsettled[m.ID] && figureOf(m) == e.Table+"/"+e.Key {
				newest = m.ID
			}
		}
		if hasViolationOn(ht.Violations, e, s.sc) {
			continue
		}
		kind, detail := VerdictLost, fmt.Sprintf("the ledger shows %s, expected %s", a, e)
		if a.Value > e.Value && a.State == e.State {
			kind = VerdictDuplicate
		} else if newest != "" {
			detail = fmt.Sprintf("%s's effect was overwritten: %s, expected %s", newest, a, e)
		}
		ht.Violations = append(ht.Violations, Violation{Kind: kind, MessageID: newest, Step: s.lastWriteStep(e), Detail: detail})
	}
	ht.Violations = append(ht.Violations, s.outsideViolations(applies)...)
	slices.SortStableFunc(ht.Violations, func(a, b Violation) int { return cmp.Compare(a.Step, b.Step) })
	for i := range ht.Violations {
		if st := ht.Violations[i].Step; st > 0 {
			ht.Violations[i].Event = s.steps[st-1].Event
		}
	}
	switch {
	case len(ht.Violations) > 0:
		ht.Verdict = ht.Violations[0].Kind
	case len(ht.DeadLettered) > 0:
		ht.Verdict = VerdictDeadLettered
	case len(ht.InFlight) > 0:
		ht.Verdict = VerdictPending
	default:
		ht.Verdict = VerdictOK
	}
	return ht
}

// judgement is the verdict at one moment of a run, with its reasons.
type judgement struct {
	Verdict                string
	Violations             []Violation
	InFlight, DeadLettered []MessageOutcome
	Effects                map[string]int // delivered message → times its effect is in the ledger (-1: unexplained)
}

// verdict fills in the run's verdict: j, the judgement after its last
// event (its frame's).
func (s *sim) verdict(ht *HandlerTrace, script *Script, j judgement) {
	ht.Verdict, ht.Violations, ht.InFlight, ht.DeadLettered = j.Verdict, j.Violations, j.InFlight, j.DeadLettered
	ht.OK = ht.Verdict == VerdictOK
	if len(ht.Violations) == 0 {
		return
	}
	v := ht.Violations[0]
	d := &Divergence{Step: v.Step, Event: v.Event, MessageID: v.MessageID, Kind: v.Kind, Detail: v.Detail}
	if v.Event > 0 {
		d.EventText = script.Events[v.Event-1].String()
	}
	ht.FirstDivergence = d
}

// inFlightWhy says why the broker still owes a delivery of the message
// (of its oldest owed copy, when the producer published it more than once).
func (s *sim) inFlightWhy(id string) string {
	if s.part != nil {
		return s.part.owedWhy(s, id)
	}
	m := s.msgs[id]
	if w := s.holderOf(m); w != nil {
		return fmt.Sprintf("%s is still being handled by %s", id, w.name)
	}
	owed := m.firstOwed()
	name := id
	if owed != nil && len(m.copies) > 1 {
		name = fmt.Sprintf("copy %d of %s", owed.n, id)
	}
	for i := len(s.steps) - 1; i >= 0; i-- {
		st := s.steps[i]
		if st.Message != id || owed != nil && st.Copy != owed.label() {
			continue
		}
		switch st.Kind {
		case StepAckLost:
			return name + "'s ack was lost: the broker will deliver it again when its lease ends"
		case StepAckRefused:
			return name + "'s late ack carried a receipt handle no longer the latest, so nothing was deleted: the broker will deliver it again"
		case StepCrash:
			return fmt.Sprintf("%s crashed before acking %s: the broker will deliver it again when its lease ends", st.Worker, name)
		case StepAbort:
			return name + "'s handler failed without acking: the broker will deliver it again"
		case StepDeliver, StepLeaseExpired:
			return name + " was delivered and not acked yet: the broker will deliver it again when its lease ends"
		}
	}
	return name + " is not acked yet"
}

// hasViolationOn reports whether a violation already names a message on the figure.
func hasViolationOn(vs []Violation, f Figure, sc *Scenario) bool {
	for _, v := range vs {
		if m := sc.Message(v.MessageID); m != nil && figureOf(*m) == f.Table+"/"+f.Key {
			return true
		}
	}
	return false
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
	if m.Kind == KindPrice {
		return "prices/" + m.SKU
	}
	return "accounts/" + m.AccountID
}

// applications is how many times the message's effect is in the ledger
// by the per-message account: its payment's credits in its account's
// balance, its order's shipments; -1 when the account cannot say (an
// unexplained balance, a price, an unknown message).
func (e *effectLedger) applications(sc *Scenario, id string) int {
	m := sc.Message(id)
	if m == nil {
		return -1
	}
	switch m.Kind {
	case KindCredit:
		a := e.accounts[m.AccountID]
		if a == nil || !a.explained {
			return -1
		}
		n := 0
		for _, o := range sc.Messages {
			if o.Kind == KindCredit && o.BusinessKey() == m.BusinessKey() {
				n += a.credits[o.ID].applied
			}
		}
		return n
	case KindShip:
		return len(e.shipmentsOf(m.OrderID))
	}
	return -1
}

// newPeak records n applications of the message's effect and reports
// whether the ledger never held it that many times before.
func (e *effectLedger) newPeak(id string, n int) bool {
	if n <= e.peak[id] {
		return false
	}
	if e.peak == nil {
		e.peak = map[string]int{}
	}
	e.peak[id] = n
	return true
}

// Effect is the account of one business effect up to a cursor: the
// business key (Message.BusinessKey: a payment is one effect whatever the
// number of messages that carry it), the messages that applied it and the
// steps that did, ascending.
type Effect struct {
	Key      string
	Kind     string   // the kind of the key's messages (KindCredit…)
	Carriers []string // the messages that applied it, in the scenario's order
	Steps    []int
}

// Effects are the business effects that took place in the ledger up to
// event (inclusive), one per business key: an effect carried by several
// messages comes at the first of the key's messages in the scenario's
// order, an effect carried by one message at that message.
func (h *HandlerTrace) Effects(sc *Scenario, event int) []Effect {
	steps := h.EffectSteps(event)
	var out []Effect
	done := map[string]bool{}
	for i := range sc.Messages {
		m := &sc.Messages[i]
		key := m.BusinessKey()
		if done[key] {
			continue
		}
		e := Effect{Key: key, Kind: m.Kind}
		for j := range sc.Messages {
			if o := &sc.Messages[j]; o.BusinessKey() == key && len(steps[o.ID]) > 0 {
				e.Carriers = append(e.Carriers, o.ID)
				e.Steps = append(e.Steps, steps[o.ID]...)
			}
		}
		switch {
		case len(e.Carriers) > 1:
			done[key] = true
			slices.Sort(e.Steps)
			out = append(out, e)
		case len(e.Carriers) == 1 && e.Carriers[0] == m.ID:
			done[key] = true
			out = append(out, e)
		}
	}
	return out
}
