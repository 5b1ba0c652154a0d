package playground

import (
	"fmt"
	"slices"
	"strings"
)

// Rules every exercise enforces besides its invariants, named like them in
// a counterexample.
const (
	// RuleAckedNotRetried: a handler acks every message, a copy of one it
	// already handled included; a handler that fails (a constraint it
	// trips on a duplicate, say) makes the broker redeliver the message
	// until it is dead-lettered.
	RuleAckedNotRetried = "acked-not-retried"
	// RuleBoundedStorage: with bounds.max_id_age, the dedupe table does
	// not keep an id forever.
	RuleBoundedStorage = "bounded-storage"
)

// broken reports the first rule the run breaks, and says how: a handler
// that failed without acking, or a message dead-lettered (always); a
// message whose effect is in the ledger twice, or an effect its business
// rule forbids (as soon as it commits, settled or not, when the invariants
// care about duplicates); and, once the schedule has settled, the
// exercise's invariants on the figures and every message that must take
// effect having taken it.
func (x *explorer) broken(s *sim, settled bool) (string, string) {
	for _, st := range s.steps {
		if st.Kind == StepAbort {
			why := ""
			if prev := st.Index - 2; prev >= 0 && s.steps[prev].Error != "" {
				why = " (" + cleanSQLError(s.steps[prev].Error) + ")"
			}
			return RuleAckedNotRetried, fmt.Sprintf("%s's handler failed on %s's delivery %d%s and did not ack: the broker redelivers it until it is dead-lettered", st.Worker, st.Message, st.Attempt, why)
		}
		if st.Kind == StepDeadLetter {
			return RuleAckedNotRetried, fmt.Sprintf("%s was dead-lettered: the broker gave up on it after %d deliveries", st.Message, s.sc.Settings.MaxDeliveries)
		}
	}
	dupInv, lostInv := "", ""
	for _, inv := range x.invariants {
		switch inv {
		case InvariantExactlyOnce:
			dupInv, lostInv = inv, inv
		case InvariantShippedOnceIfPaid, InvariantNoDuplicateEffect:
			if dupInv == "" {
				dupInv = inv
			}
		case InvariantNoLostEffect:
			lostInv = inv
		}
	}
	_, applies := s.reference(nil)
	accounts := s.account(applies)
	for _, id := range x.msgs {
		acc, ok := accounts.of(s.sc, id)
		if !ok || dupInv == "" {
			continue
		}
		m := s.msgs[id].m
		switch {
		case acc.unexpectedAt > 0:
			return dupInv, fmt.Sprintf("%s shipped order %s, which was not paid", id, m.OrderID)
		case acc.times > 1 && m.Kind == KindShip:
			return dupInv, fmt.Sprintf("order %s shipped %d times, expected once", m.OrderID, acc.times)
		case acc.times > 1 && len(acc.carriers) > 1:
			return dupInv, fmt.Sprintf("payment %s credited %d times to %s (%s carry it), expected once", m.BusinessKey(), acc.times, m.AccountID, joinAnd(acc.carriers))
		case acc.times > 1:
			return dupInv, fmt.Sprintf("%s credited %d times to %s, expected once", id, acc.times, m.AccountID)
		}
	}
	if !settled {
		return "", ""
	}
	if inv, d := x.storageBroken(s); inv != "" {
		return inv, d
	}
	inv, d := exerciseInvariantBroken(x.invariants, x.sc, s.expected(), s.actual())
	// A missing effect is told by its message first: "msg-2 was acked but
	// its effect is not in the ledger (acc-1 balance 150, expected 170)".
	for _, id := range x.msgs {
		if acc, ok := accounts.of(s.sc, id); ok && lostInv != "" && acc.applies && acc.times == 0 {
			lost := fmt.Sprintf("%s was acked but its effect is not in the ledger", id)
			if acc.droppedBy != "" {
				lost = s.droppedDetail(s.msgs[id].m, acc)
			}
			if inv != "" {
				lost += " (" + d + ")"
			}
			return lostInv, lost
		}
	}
	return inv, d
}

// storageBroken applies bounds.max_id_age: an id recorded at tick t must be
// gone once a handler has run at tick t+max_id_age or later. An id is
// remembered wherever the handler keeps it: any table but the business
// ones (accounts, orders, shipments, prices, offsets) whose row holds a
// message id or payment key of the scenario is a dedupe store, and the
// row was recorded when the commit that wrote it last ran.
func (x *explorer) storageBroken(s *sim) (string, string) {
	if x.b.MaxIDAge <= 0 {
		return "", ""
	}
	lastRun := int64(-1)
	recorded := map[string]int64{} // table/key → tick of the commit that last wrote it
	for _, st := range s.steps {
		if st.Kind == StepDeliver {
			lastRun = st.Tick
		}
		for _, c := range st.Changes {
			if c.Committed && c.After != nil && dedupeStore(c.Table) {
				recorded[c.Table+"/"+c.Key] = st.Tick
			}
		}
	}
	ids := map[string]bool{}
	for _, m := range s.sc.Messages {
		ids[m.ID], ids[m.BusinessKey()] = true, true
	}
	for _, t := range tableOrder {
		if !dedupeStore(t) {
			continue
		}
		rows := s.l.rows(t)
		rowids := make([]int64, 0, len(rows))
		for id := range rows {
			rowids = append(rowids, id)
		}
		slices.Sort(rowids)
		for _, rowid := range rowids {
			row := rows[rowid]
			id := ""
			for _, v := range row {
				if ids[valueText(v)] {
					id = valueText(v)
					break
				}
			}
			at, ok := recorded[t+"/"+rowKey(t, rowid, row)]
			if id == "" || !ok || lastRun < at+x.b.MaxIDAge {
				continue
			}
			why := fmt.Sprintf("the handler never deletes from %s", t)
			if x.h.deletesFrom(t) {
				why = fmt.Sprintf("the handler prunes %s, but keeps ids longer than %d %ss", t, x.b.MaxIDAge, s.sc.TickUnit)
			}
			return RuleBoundedStorage, fmt.Sprintf("the id %s recorded in %s at tick %d is still stored at tick %d, after the handler ran at tick %d: %s", id, t, at, s.now, lastRun, why)
		}
	}
	return "", ""
}

// dedupeStore tells the tables a handler may remember ids in from those
// that hold the business's own records.
func dedupeStore(table string) bool {
	switch table {
	case "accounts", "orders", "shipments", "prices", "consumer_offsets":
		return false
	}
	return true
}

// deletesFrom reports whether any of the handler's statements deletes
// from the table.
func (h *Handler) deletesFrom(table string) bool {
	for _, stmts := range h.sections {
		for _, st := range stmts {
			if st.Verb == "DELETE" && strings.Contains(strings.ToLower(st.SQL), strings.ToLower(table)) {
				return true
			}
		}
	}
	return false
}
