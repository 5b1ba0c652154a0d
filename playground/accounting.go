package playground

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// effectLedger is the per-message account of a run: which messages' effects
// the committed ledger holds, and how many times. It is kept from the
// commits the change hooks report, so a verdict can say "msg-1 lost,
// msg-2 applied twice" even when the balance happens to come out right.
//
// A credit is in a balance once for each commit that added its amount to
// its account. A commit that writes the balance the account had after the
// message in publish order (an absolute value, as set-value writes) leaves
// exactly the messages up to it in the balance, once each: a stale copy
// written after a newer message takes the newer one out. Any other change
// makes the balance unexplained, and the verdict falls back to comparing
// the figure. A ship message is in an order once for each of its shipment
// rows that is still there.
//
// Its maps are made on their first write (most runs change few of them).
type effectLedger struct {
	accounts  map[string]*accountEffects
	shipments map[int64]shipmentEffect // shipments rowid → who inserted it
	prices    map[string][]priceWrite  // SKU → the commits that changed its price
	outside   *outsideWorld            // charges and emails (provider.go)
	// peak is, per message, the most times its effect has been in the
	// ledger (verdict.go's committed): what the trace counts as its
	// applications. Not part of the state key: it decides no future.
	peak map[string]int
}

type accountEffects struct {
	explained bool
	credits   map[string]creditEffect // message → its credit in the balance
}

// creditEffect is one message's credit in an account's balance.
type creditEffect struct {
	applied   int    // times it is in the balance
	firstAt   int    // step of the commit that first put it in
	twiceAt   int    // step of the commit that put it in a second time
	droppedAt int    // step of the commit that took it out
	droppedBy string // the message whose absolute write took it out
}

// set records a message's credit.
func (a *accountEffects) set(id string, c creditEffect) {
	if a.credits == nil {
		a.credits = map[string]creditEffect{}
	}
	a.credits[id] = c
}

type shipmentEffect struct {
	order, message string
	step           int
}

func newEffectLedger(sc *Scenario) *effectLedger {
	e := &effectLedger{accounts: make(map[string]*accountEffects, len(sc.Accounts)), outside: newOutsideWorld()}
	all := make([]accountEffects, len(sc.Accounts))
	for i, a := range sc.Accounts {
		all[i].explained = true
		e.accounts[a.ID] = &all[i]
	}
	return e
}

func (e *effectLedger) clone() *effectLedger {
	out := &effectLedger{accounts: map[string]*accountEffects{}, shipments: maps.Clone(e.shipments), outside: e.outside.clone(), peak: maps.Clone(e.peak)}
	if e.prices != nil {
		out.prices = make(map[string][]priceWrite, len(e.prices))
		for sku, ws := range e.prices {
			out.prices[sku] = slices.Clone(ws)
		}
	}
	for id, a := range e.accounts {
		out.accounts[id] = &accountEffects{explained: a.explained, credits: maps.Clone(a.credits)}
	}
	return out
}

// record takes one committed row change, made by step.
func (e *effectLedger) record(sc *Scenario, ch rowChange, step int) {
	switch ch.Table {
	case "accounts":
		key := ch.Before
		if key == nil {
			key = ch.After
		}
		a := e.accounts[valueText(key[0])]
		if a == nil {
			return // a row the scenario does not have: not a figure
		}
		if ch.Before == nil || ch.After == nil {
			a.explained = false // the account row itself appeared or vanished
			return
		}
		before, _ := ch.Before[1].(int64)
		after, _ := ch.After[1].(int64)
		if before == after && valueText(ch.Before[1]) == valueText(ch.After[1]) {
			return
		}
		m := sc.Message(ch.Message)
		if m == nil || m.Kind != KindCredit || m.AccountID != valueText(key[0]) {
			a.explained = false
			return
		}
		if _, isInt := ch.After[1].(int64); isInt && after-before == m.Amount {
			c := a.credits[m.ID]
			c.applied++
			if c.applied == 1 {
				c.firstAt = step
			}
			if c.applied == 2 {
				c.twiceAt = step
			}
			a.set(m.ID, c)
			return
		}
		if _, isInt := ch.After[1].(int64); isInt && after == m.Balance {
			// An absolute write: the messages up to m, once each.
			// A repeated payment is never in a balance: its first
			// carrier's credit is (mergePayments and account count it
			// for the repeat).
			inPrefix := true
			for _, o := range sc.Messages {
				if o.Kind != KindCredit || o.AccountID != m.AccountID {
					continue
				}
				if !sc.repeats(&o) {
					if c := a.credits[o.ID]; inPrefix {
						c.applied = 1
						a.set(o.ID, c)
					} else if c.applied > 0 {
						c.applied, c.droppedAt, c.droppedBy = 0, step, m.ID
						a.set(o.ID, c)
					}
				}
				if o.ID == m.ID {
					inPrefix = false
				}
			}
			a.explained = true
			return
		}
		a.explained = false
	case "prices":
		e.recordPrice(ch, step)
	case "shipments":
		if e.shipments == nil {
			e.shipments = map[int64]shipmentEffect{}
		}
		switch ch.Op {
		case "insert":
			e.shipments[ch.NewRowID] = shipmentEffect{order: valueText(ch.After[0]), message: ch.Message, step: step}
		case "delete":
			delete(e.shipments, ch.OldRowID)
		default:
			delete(e.shipments, ch.OldRowID)
			e.shipments[ch.NewRowID] = shipmentEffect{order: valueText(ch.After[0]), message: ch.Message, step: step}
		}
	}
}

// shipmentsOf lists the order's live shipments, oldest first.
func (e *effectLedger) shipmentsOf(order string) []shipmentEffect {
	var out []shipmentEffect
	for _, s := range e.shipments {
		if s.order == order {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].step < out[j].step })
	return out
}

// keyString is the account for the explorer's state hash: two runs with the
// same rows but different messages in a balance are different states.
func (e *effectLedger) keyString() string {
	var b strings.Builder
	ids := make([]string, 0, len(e.accounts))
	for id := range e.accounts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		a := e.accounts[id]
		fmt.Fprintf(&b, "%s:%v:", id, a.explained)
		ms := make([]string, 0, len(a.credits))
		for m, c := range a.credits {
			if c.applied > 0 {
				ms = append(ms, fmt.Sprintf("%s×%d", m, c.applied))
			}
		}
		sort.Strings(ms)
		b.WriteString(strings.Join(ms, ","))
		b.WriteByte('|')
	}
	ships := make([]string, 0, len(e.shipments))
	for _, s := range e.shipments {
		ships = append(ships, s.order+"←"+s.message)
	}
	sort.Strings(ships)
	b.WriteString(strings.Join(ships, ","))
	e.priceKeyString(&b)
	b.WriteString("|outside:" + e.outside.keyString())
	return b.String()
}

// messageAccount is one delivered message's outcome in the final ledger.
type messageAccount struct {
	delivered    bool // the message was delivered (only those are accounted)
	applies      bool // its business rule says it takes effect
	times        int  // how many times its effect is in the ledger; -1 when the figure is unexplained
	firstAt      int  // step that first put it in
	twiceAt      int  // step that put it in a second time
	droppedAt    int
	droppedBy    string   // the older message whose absolute balance overwrote it
	unexpectedAt int      // step of an effect it must not have had
	staleBy      string   // the older price change that overwrote it
	staleAt      int      // step of that write
	carriers     []string // the messages that carry its payment, when more than one does
}

// messageAccounts are the scenario's messages' accounts, in the order of
// its messages (a scenario has a few: a slice, no map).
type messageAccounts []messageAccount

// of is the account of the message with the id; ok is false when it was
// not delivered (or the scenario has no such message).
func (as messageAccounts) of(sc *Scenario, id string) (messageAccount, bool) {
	for i := range sc.Messages {
		if sc.Messages[i].ID == id {
			return as[i], as[i].delivered
		}
	}
	return messageAccount{}, false
}

// account tells how many times each delivered message's effect is in the
// committed ledger, against its business rule. The accounts are in the
// order of the scenario's messages; an undelivered one's is zero.
func (s *sim) account(applies map[string]bool) messageAccounts {
	sc := s.sc
	out := make(messageAccounts, len(s.sc.Messages))
	for i, m := range s.sc.Messages {
		if !s.delivered[m.ID] {
			continue
		}
		acc := messageAccount{delivered: true, applies: applies[m.ID]}
		switch m.Kind {
		case KindCredit:
			a := s.fx.accounts[m.AccountID]
			if a == nil || !a.explained {
				acc.times = -1
				break
			}
			c := a.credits[m.ID]
			if c.applied == 0 && sc.repeats(&m) && !s.delivered[sc.firstCarrier(&m).ID] {
				// A repeat's absolute write put its payment in the
				// balance as its first carrier's, which was not delivered.
				c = a.credits[sc.firstCarrier(&m).ID]
			}
			acc.times, acc.firstAt, acc.twiceAt, acc.droppedAt, acc.droppedBy = c.applied, c.firstAt, c.twiceAt, c.droppedAt, c.droppedBy
		case KindShip:
			ships := s.fx.shipmentsOf(m.OrderID)
			if !acc.applies {
				for _, sh := range ships {
					if sh.message == m.ID {
						acc.unexpectedAt = sh.step
						break
					}
				}
				break
			}
			acc.times = len(ships)
			if len(ships) > 1 {
				acc.twiceAt = ships[1].step
			}
			if !s.orderShipped(m.OrderID) {
				acc.times = 0
			}
		case KindPrice:
			s.accountPrice(&acc, &m)
		}
		out[i] = acc
	}
	mergePayments(s.sc, out)
	return out
}

// sharesPaymentKey reports whether two of the scenario's credits carry the
// same payment (a scenario has a few messages: a scan, no map).
func sharesPaymentKey(sc *Scenario) bool {
	for i := range sc.Messages {
		if sc.repeats(&sc.Messages[i]) {
			return true
		}
	}
	return false
}

// orderShipped reports whether the committed ledger has the order in state
// shipped (a scenario has a few orders: a scan, no map).
func (s *sim) orderShipped(id string) bool {
	for _, v := range s.l.rows("orders") {
		if valueText(v[0]) == id {
			return valueText(v[1]) == "shipped"
		}
	}
	return false
}

// mergePayments folds the credits that carry one payment (a producer that
// published it twice, under two message ids) into one account: the
// payment's effect is expected once, on the first of them delivered.
func mergePayments(sc *Scenario, out messageAccounts) {
	if !sharesPaymentKey(sc) {
		return
	}
	carriers := map[string][]int{} // business key → delivered credits (their indexes), publish order
	for i, m := range sc.Messages {
		if out[i].delivered && m.Kind == KindCredit {
			carriers[m.BusinessKey()] = append(carriers[m.BusinessKey()], i)
		}
	}
	for _, idx := range carriers {
		if len(idx) < 2 {
			continue
		}
		ids := make([]string, len(idx))
		for k, i := range idx {
			ids[k] = sc.Messages[i].ID
		}
		first := out[idx[0]]
		first.times, first.carriers = 0, ids
		var steps []int // each application of the payment, by any of its messages
		for _, i := range idx {
			acc := out[i]
			if acc.times < 0 {
				first.times = -1
				break
			}
			first.times += acc.times
			for nth, at := range []int{acc.firstAt, acc.twiceAt} {
				if acc.times > nth && at > 0 {
					steps = append(steps, at)
				}
			}
			if first.droppedAt == 0 {
				first.droppedAt = acc.droppedAt
			}
			if i != idx[0] {
				out[i] = messageAccount{delivered: true} // its rule: no effect of its own
			}
		}
		sort.Ints(steps)
		if len(steps) > 1 {
			first.twiceAt = steps[1]
		}
		out[idx[0]] = first
	}
}

// firstCarrier is the scenario's first credit with m's payment (m itself
// when m is the first).
func (sc *Scenario) firstCarrier(m *Message) *Message {
	for i := range sc.Messages {
		o := &sc.Messages[i]
		if o.Kind == KindCredit && o.BusinessKey() == m.BusinessKey() {
			return o
		}
	}
	return m
}

// carriedAhead sums, per account, the credits its balance holds for
// messages not delivered yet: an absolute balance written by a later
// message carries them (the producer's balance after that message). The
// ledger is then ahead of the delivered messages, not wrong.
func (s *sim) carriedAhead() map[string]int64 {
	var out map[string]int64
	for _, m := range s.sc.Messages {
		if m.Kind != KindCredit || s.delivered[m.ID] || s.sc.repeats(&m) {
			continue
		}
		a := s.fx.accounts[m.AccountID]
		if a == nil || !a.explained || a.credits[m.ID].applied != 1 {
			continue
		}
		if out == nil {
			out = map[string]int64{}
		}
		out[m.AccountID] += m.Amount
	}
	return out
}

// droppedDetail tells a credit taken out of its balance by an older
// message's absolute write: "msg-3's effect was overwritten by msg-2,
// whose absolute balance 575 is older: a stale write".
func (s *sim) droppedDetail(m *Message, acc messageAccount) string {
	if o := s.sc.Message(acc.droppedBy); o != nil {
		return fmt.Sprintf("%s's effect was overwritten by %s, whose absolute balance %d is older: a stale write, not a duplicate", m.ID, o.ID, o.Balance)
	}
	return m.ID + "'s effect was overwritten by a stale write"
}
